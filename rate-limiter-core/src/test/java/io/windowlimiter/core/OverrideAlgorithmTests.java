package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An operator's override that names no algorithm counts by the algorithm of the limit it replaces, in its
 * keys: what the client used stays used, under the override and after it. One that names another algorithm
 * is refused, nothing stored. Issue 44, attack round 2 finding 2(b), through the core on the real Redis: LLM
 * route {@code chat}, 20,000 tokens a day counted by a fixed window, as in the attack.
 */
class OverrideAlgorithmTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final long HOUR = 3_600_000;

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final PlanAssignments assignments = new PlanAssignments(this.redis, Set.of(), Duration.ofMillis(250),
			10_000, Duration.ofSeconds(10), System::currentTimeMillis);

	private final RateLimiterCore core = new RateLimiterCore(new LimitScript(this.redis), new PolicyRegistry(Map.of()),
			this.assignments, false, this.guard, new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
			Duration.ofSeconds(10), Clock.systemUTC());

	private final String client = "override-algorithm-" + UUID.randomUUID();

	private final String route = "chat-" + UUID.randomUUID();

	@AfterEach
	void close() {
		this.assignments.clear(this.route, this.client).block(TIMEOUT);
		this.guard.close();
	}

	/** The attack's route: 20,000 tokens a day, fixed window; 100 calls a minute. */
	private void chat() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].algorithm", "fixed-window");
		args.put("window-rate-limiter.limits[0].limit", "20000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].limit", "100");
		args.put("window-rate-limiter.limits[1].window", "1m");
		this.core.configure(this.route, args, SlotRelease.ALWAYS, true);
	}

	/** The client's tokens left on the route now, read at cost 0. */
	private long tokensLeft() {
		return this.core.peek(this.route, this.client).block(TIMEOUT).decisions().get(0).remaining();
	}

	/** An LLM call of the client using exactly {@code tokens}; whether it was admitted. */
	private boolean spend(long tokens) {
		Admission call = this.core.admitTokens(this.route, this.client, tokens, Mono.empty()).block(TIMEOUT);
		if (call.passes()) {
			this.core.settleTokens(call.reservation(), tokens).block(TIMEOUT);
		}
		return call.passes();
	}

	/** A fixed window's count is read across an hour's override within the hour: not across the hour's edge. */
	private static void awayFromAnHourEdge() throws InterruptedException {
		long intoHour = System.currentTimeMillis() % HOUR;
		if (intoHour > HOUR - 15_000) {
			Thread.sleep(HOUR - intoHour + 100);
		}
	}

	/**
	 * The attack: 6,039 of 20,000 tokens used, then {"limit":5000,"window":"1h","unit":"tokens"}. Before: counted
	 * by the default sliding-window-counter in a key of its own, 5,000 fresh tokens; what was spent under it lost
	 * to the route once cleared. Now counted by the route's fixed window in its key: the 6,039 are this hour's as far
	 * as the override goes, nothing left; a larger override leaves what the client has not used; cleared, the day's
	 * count holds what was spent under the override too.
	 */
	@Test
	void anOverrideNamingNoAlgorithmCountsByTheRoutesAndKeepsWhatTheClientUsed() throws InterruptedException {
		chat();
		awayFromAnHourEdge();
		assertThat(spend(6_039)).isTrue();
		assertThat(tokensLeft()).isEqualTo(13_961);

		this.assignments.override(this.route, this.client, List.of(Map.of("limit", "5000", "window", "1h", "unit",
				"tokens")), null).block(TIMEOUT);
		assertThat(tokensLeft()).as("5,000 an hour, 6,039 used in it: no fresh quota").isZero();
		// (a call refused now would write the hour's count at the 5,000 it allows, which the next override would read)

		this.assignments.override(this.route, this.client, List.of(Map.of("limit", "10000", "window", "1h", "unit",
				"tokens")), null).block(TIMEOUT);
		assertThat(tokensLeft()).as("10,000 an hour less the 6,039 used").isEqualTo(3_961);
		assertThat(spend(961)).isTrue();
		assertThat(tokensLeft()).isEqualTo(3_000);

		this.assignments.clear(this.route, this.client).block(TIMEOUT);
		assertThat(tokensLeft()).as("the day's 20,000 less 6,039 + 961: what was spent under the override stays spent")
			.isEqualTo(13_000);
	}

	/**
	 * An override naming another algorithm than the limit it replaces is the operator's choice: it counts in keys of
	 * its own, from zero (documented); the same algorithm, named, takes the route's count.
	 */
	@Test
	void anOverrideNamingAnotherAlgorithmCountsInKeysOfItsOwn() {
		chat();
		assertThat(spend(6_039)).isTrue();
		this.assignments.override(this.route, this.client, List.of(Map.of("limit", "5000", "window", "1h", "unit",
				"tokens", "algorithm", "sliding-window-counter")), null).block(TIMEOUT);
		assertThat(tokensLeft()).isEqualTo(5_000);
		this.assignments.override(this.route, this.client, List.of(Map.of("limit", "5000", "window", "1h", "unit",
				"tokens", "algorithm", "fixed-window"), Map.of("limit", "10", "window", "1m")), null).block(TIMEOUT);
		assertThat(tokensLeft()).isZero();
	}

}
