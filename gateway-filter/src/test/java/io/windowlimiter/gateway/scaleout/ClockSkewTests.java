package io.windowlimiter.gateway.scaleout;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.windowlimiter.core.DenyCache;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateway instances whose clocks are 20 s apart (one 10 s slow, one 10 s fast) decide alike: each
 * limiter is handed its skewed clock, and still both agree on Retry-After, because a decision takes its
 * time from the Redis server ({@code TIME} in the script). Assignments expire alike too: their expiry is
 * on the Redis clock, and each instance corrects its own clock by how far it was off Redis's at the last
 * load. The controls show what the same traffic does when each instance passes its own clock to the
 * script, as a limiter timed on the gateway would: the instances disagree about windows and Retry-After.
 *
 * <p>The instances are two connection factories each with their own limiter, deny cache and
 * assignments, as two gateway processes would have; one JVM cannot give two application contexts
 * different system clocks, so the skew is given to each instance as a {@link Clock}.
 */
class ClockSkewTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Duration SKEW = Duration.ofSeconds(10);

	private final Instance slow = new Instance(Clock.offset(Clock.systemUTC(), SKEW.negated()));

	private final Instance fast = new Instance(Clock.offset(Clock.systemUTC(), SKEW));

	private final String client = UUID.randomUUID().toString();

	@AfterEach
	void stop() {
		this.slow.close();
		this.fast.close();
	}

	@Test
	void limitersOnSkewedClocksAgreeOnRetryAfter() {
		Response first = this.slow.limiter.isAllowed("skew", this.client).block(TIMEOUT);
		assertThat(first.isAllowed()).isTrue();
		assertThat(this.fast.limiter.isAllowed("skew", this.client).block(TIMEOUT).isAllowed()).isTrue();
		Response denied = this.fast.limiter.isAllowed("skew", this.client).block(TIMEOUT);
		// the slow instance's request leaves the window a minute after it was made, on one clock
		assertThat(denied.isAllowed()).isFalse();
		long retryAfter = Long.parseLong(denied.getHeaders().get("Retry-After"));
		assertThat(retryAfter).isBetween(55L, 60L);
		Response deniedToo = this.slow.limiter.isAllowed("skew", this.client).block(TIMEOUT);
		assertThat(deniedToo.isAllowed()).isFalse();
		assertThat(Long.parseLong(deniedToo.getHeaders().get("Retry-After"))).isBetween(retryAfter - 1, retryAfter);
	}

	/** On their own clocks alone, the fast instance would end a 2 s assignment at once, the slow one 10 s late. */
	@Test
	void assignmentsOnSkewedClocksExpireAlike() throws InterruptedException {
		long written = System.nanoTime();
		this.slow.assignments.assign("orders", this.client, "pro", Duration.ofSeconds(2)).block(TIMEOUT);
		this.fast.assignments.refresh().block(TIMEOUT);
		assertThat(this.fast.assignments.find("orders", this.client)).as("live on the fast instance").isNotNull();
		assertThat(this.slow.assignments.find("orders", this.client)).as("live on the slow instance").isNotNull();
		Thread.sleep(Math.max(0, Duration.ofMillis(2_300).minusNanos(System.nanoTime() - written).toMillis()));
		assertThat(this.fast.assignments.find("orders", this.client)).as("ended on the fast instance").isNull();
		assertThat(this.slow.assignments.find("orders", this.client)).as("ended on the slow instance").isNull();
	}

	@Test
	void onTheirOwnClocksTheSameInstancesWouldDisagree() {
		// the control: each instance passes its own clock, as a limiter timed on the gateway would
		WindowPolicy twoPerMinute = new WindowPolicy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1));
		String key = RedisKeys.of("skew-local", this.client, Algorithm.SLIDING_LOG.keySuffix());
		this.slow.script.decideOne(key, twoPerMinute, 1, Long.toString(this.slow.clock.millis())).block(TIMEOUT);
		this.fast.script.decideOne(key, twoPerMinute, 1, Long.toString(this.fast.clock.millis())).block(TIMEOUT);
		Decision denied = this.fast.script.decideOne(key, twoPerMinute, 1, Long.toString(this.fast.clock.millis()))
			.block(TIMEOUT);
		// the slow instance's request seems 20 s old to the fast one: Retry-After is 20 s short
		assertThat(denied.retryAfterMillis()).isBetween(35_000L, 41_000L);
	}

	@Test
	void onTheirOwnClocksInstancesStraddlingAWindowEdgeWouldLetTwiceTheLimitThrough() {
		// true time 55 s into a minute: the slow instance is still in this minute, the fast one in the next
		Instant trueTime = Instant.parse("2026-01-01T00:00:55Z");
		Clock slowClock = Clock.fixed(trueTime.minus(SKEW), ZoneOffset.UTC);
		Clock fastClock = Clock.fixed(trueTime.plus(SKEW), ZoneOffset.UTC);
		WindowPolicy tenPerMinute = new WindowPolicy(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
		String key = RedisKeys.of("skew-edge", this.client, Algorithm.FIXED_WINDOW.keySuffix());
		int allowed = 0;
		for (int i = 0; i < 20; i++) {
			Decision decision = this.slow.script.decideOne(key, tenPerMinute, 1, Long.toString(slowClock.millis()))
				.block(TIMEOUT);
			allowed += decision.allowed() ? 1 : 0;
		}
		for (int i = 0; i < 20; i++) {
			Decision decision = this.fast.script.decideOne(key, tenPerMinute, 1, Long.toString(fastClock.millis()))
				.block(TIMEOUT);
			allowed += decision.allowed() ? 1 : 0;
		}
		// on one clock these 40 requests fall into one window and 10 pass
		assertThat(allowed).isEqualTo(20);
	}

	/** One gateway instance: its own connections, script, limiter, deny cache, assignments and clock. */
	private static final class Instance implements AutoCloseable {

		final Clock clock;

		final LettuceConnectionFactory connections;

		final LimitScript script;

		final WindowRateLimiter limiter;

		final PlanAssignments assignments;

		Instance(Clock clock) {
			this.clock = clock;
			RedisTestServer redis = RedisTestServer.get();
			this.connections = new LettuceConnectionFactory(redis.host(), redis.port());
			this.connections.afterPropertiesSet();
			this.connections.start();
			ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(this.connections);
			this.script = new LimitScript(template);
			// loaded first: a cold first call on a busy machine must not outlast the guard's bound
			this.script.load().block(Duration.ofSeconds(10));
			this.limiter = WindowRateLimiter.of(this.script,
					new RedisGuard(Duration.ofMillis(600), Duration.ofMillis(400), Duration.ofSeconds(10)),
					new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(10), clock);
			this.limiter.onApplicationEvent(new FilterArgsEvent(this, "skew", Map.of("window-rate-limiter.algorithm",
					"sliding-log", "window-rate-limiter.limit", "2", "window-rate-limiter.window", "1m")));
			this.assignments = new PlanAssignments(template, Set.of("free", "pro"), Duration.ofMillis(250), 100,
					Duration.ofSeconds(10), clock::millis);
		}

		@Override
		public void close() {
			this.connections.destroy();
		}

	}

}
