package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.RateLimiterCore.Settled;
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
 * An LLM call is costed by the limits of the client's own policy, through the core on the real Redis: an
 * operator's override (one limit, as the endpoint sends it, or a token limit), a plan of token limits, and a
 * change of policy with counts already in place, windows differing. Route {@code chat}: 1,000 tokens a day and
 * 5 calls a day (sliding logs: exact, no window edge in a test), and at most 2 calls in flight.
 */
class LlmPoliciesTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final PlanAssignments assignments = new PlanAssignments(this.redis, Set.of("free", "pro"),
			Duration.ofMillis(250), 10_000, Duration.ofSeconds(10), System::currentTimeMillis);

	private final RateLimiterCore core = new RateLimiterCore(new LimitScript(this.redis), new PolicyRegistry(plans()),
			this.assignments, false, this.guard, new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
			Duration.ofSeconds(10), Clock.systemUTC());

	private final String client = "llm-policy-" + UUID.randomUUID();

	private final String route = "chat-" + UUID.randomUUID();

	@AfterEach
	void close() {
		this.assignments.clear(this.route, this.client).block(TIMEOUT);
		this.guard.close();
	}

	/** Plans with a token limit each, and a request limit. */
	private static Map<String, Map<String, String>> plans() {
		Map<String, Map<String, String>> plans = new LinkedHashMap<>();
		plans.put("free", Map.of("limits[0].limit", "1000", "limits[0].window", "1d", "limits[0].algorithm",
				"sliding-log", "limits[0].unit", "tokens", "limits[0].name", "tokens", "limits[1].limit", "5",
				"limits[1].window", "1d", "limits[1].algorithm", "sliding-log", "limits[1].name", "calls"));
		// the other order: keys follow what a limit counts, not where it stands
		plans.put("pro", Map.of("limits[0].limit", "50", "limits[0].window", "1d", "limits[0].algorithm",
				"sliding-log", "limits[0].name", "calls", "limits[1].limit", "5000", "limits[1].window", "1d",
				"limits[1].algorithm", "sliding-log", "limits[1].unit", "tokens", "limits[1].name", "tokens"));
		return plans;
	}

	private void chat(boolean inFlight) {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].algorithm", "sliding-log");
		args.put("window-rate-limiter.limits[0].limit", "1000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].algorithm", inFlight ? "concurrency" : "sliding-log");
		args.put("window-rate-limiter.limits[1].limit", inFlight ? "2" : "5");
		args.put("window-rate-limiter.limits[1].window", inFlight ? "10m" : "1d");
		this.core.configure(this.route, args, SlotRelease.ALWAYS, true);
	}

	private Admission call(long tokens) {
		return this.core.admitTokens(this.route, this.client, tokens, Mono.empty()).block(TIMEOUT);
	}

	/** Each limit the client's policy has on the route now: its remaining, read at cost 0. */
	private List<Long> remaining() {
		return this.core.peek(this.route, this.client)
			.block(TIMEOUT)
			.decisions()
			.stream()
			.map(decision -> decision.remaining())
			.toList();
	}

	private void override(Map<String, ?> limit) {
		this.assignments.override(this.route, this.client, List.of(limit), null).block(TIMEOUT);
	}

	/**
	 * The case: a route with a token and a concurrency limit, one limit posted for the client (as the
	 * endpoint posts it: no unit, so requests). Before, the adapter laid out two costs by the route's limits and
	 * the core refused the client's one-limit policy with an IllegalArgumentException: a 500 on every call. Now
	 * the override adds a request limit beside the route's token and concurrency limits, and each call is decided.
	 */
	@Test
	void aOneLimitOverrideOnARouteWithATokenAndAConcurrencyLimitIsDecidedAndKeepsBoth() {
		chat(true);
		override(Map.of("limit", "3", "window", "1h", "algorithm", "sliding-log"));
		Admission first = call(300);
		assertThat(first.passes()).isTrue();
		assertThat(first.reservation().costs()).as("tokens, a slot, a request").containsExactly(300, 1, 1);
		assertThat(first.headers().get("RateLimit-Policy")).isEqualTo(
				"\"" + this.route + "-0\";q=1000;w=86400, \"" + this.route + "-1\";q=2;w=600, \"" + this.route
						+ "-requests\";q=3;w=3600");
		Admission second = call(300);
		assertThat(second.passes()).isTrue();
		Admission third = call(10);
		assertThat(third.passes()).as("two calls in flight: the route's concurrency limit stays").isFalse();
		assertThat(third.violated()).containsExactly(this.route + "-1");
		first.slots().release().block(TIMEOUT);
		this.core.settleTokens(first.reservation(), 50).block(TIMEOUT);
		second.slots().release().block(TIMEOUT);
		this.core.settleTokens(second.reservation(), 50).block(TIMEOUT);
		Admission fourth = call(10);
		assertThat(fourth.passes()).isTrue();
		fourth.slots().release().block(TIMEOUT);
		assertThat(remaining()).as("tokens 1000 - 50 - 50 - 10; no call in flight; 3 calls of 3").containsExactly(890L,
				2L, 0L);
		Admission refused = call(10);
		assertThat(refused.passes()).as("the override's 3 calls an hour").isFalse();
		assertThat(refused.violated()).containsExactly(this.route + "-requests");
		assertThat(refused.headers()).containsKey("Retry-After");
	}

	/** What an operator does with an abuser: a lower token budget, the route's other limits kept. */
	@Test
	void aTokenOverrideLowersTheBudgetAndKeepsTheRequestLimit() {
		chat(false);
		call(100);
		override(Map.of("limit", "150", "window", "1d", "algorithm", "sliding-log", "unit", "tokens"));
		assertThat(remaining()).as("the 100 tokens and 1 call used stay used").containsExactly(50L, 4L);
		Admission capped = call(300);
		assertThat(capped.passes()).as("estimated at 300, reserved at the override's 150: more than the 50 left")
			.isFalse();
		assertThat(capped.violated()).containsExactly(this.route + "-0");
		Admission small = call(40);
		assertThat(small.passes()).isTrue();
		assertThat(small.reservation().remainingTokens()).isEqualTo(10);
		assertThat(small.headers().get("RateLimit-Policy")).as("named as the limit it replaces")
			.isEqualTo("\"" + this.route + "-0\";q=150;w=86400, \"" + this.route + "-1\";q=5;w=86400");
		assertThat(remaining()).containsExactly(10L, 3L);
	}

	/**
	 * Counts spent under the route's default, then an override with other windows (a token limit of an hour),
	 * then the override taken away: each policy reads what the client used under the others, no fresh quota.
	 */
	@Test
	void aChangeOfPolicyKeepsWhatTheClientUsedWhenTheWindowsDiffer() {
		chat(false);
		Reservation spent = call(300).reservation();
		this.core.settleTokens(spent, 300).block(TIMEOUT);
		assertThat(remaining()).containsExactly(700L, 4L);

		override(Map.of("limit", "500", "window", "1h", "algorithm", "sliding-log", "unit", "tokens"));
		assertThat(remaining()).as("an hour's 500: the 300 used in it stay used").containsExactly(200L, 4L);
		assertThat(call(300).passes()).as("300 more do not fit the 200 left").isFalse();
		Reservation under = call(150).reservation();
		assertThat(this.core.settleTokens(under, 150).block(TIMEOUT)).isEqualTo(Settled.UNCHANGED);
		assertThat(remaining()).containsExactly(50L, 3L);

		override(Map.of("limit", "2", "window", "1m", "algorithm", "sliding-log"));
		assertThat(remaining()).as("a request limit of a minute instead: the day's tokens back, 2 calls used")
			.containsExactly(550L, 0L);
		assertThat(call(10).passes()).isFalse();

		this.assignments.clear(this.route, this.client).block(TIMEOUT);
		assertThat(remaining()).as("the route's default again: 450 tokens and 2 calls used, nothing fresh")
			.containsExactly(550L, 3L);
		assertThat(call(10).passes()).isTrue();
	}

	/**
	 * Plans count tokens on an LLM route: a client on pro reserves its estimate up to pro's 5,000, and the keys
	 * of its token limit are its free plan's, whichever place the plans give it.
	 */
	@Test
	void aPlanOfTokenLimitsDecidesAnLlmCallAndAChangeOfPlanKeepsTheTokensUsed() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.plan", "free");
		this.core.configure(this.route, args, SlotRelease.ALWAYS, true);
		Admission onFree = call(3000);
		assertThat(onFree.reservation().costs()).as("capped at free's 1,000").containsExactly(1000, 1);
		this.core.settleTokens(onFree.reservation(), 400).block(TIMEOUT);
		this.assignments.assign(this.route, this.client, "pro", null).block(TIMEOUT);
		Admission onPro = call(3000);
		assertThat(onPro.passes()).isTrue();
		assertThat(onPro.reservation().costs()).as("calls, then tokens, as pro lists them").containsExactly(1, 3000);
		assertThat(onPro.reservation().remainingTokens()).as("5,000 less the 400 used on free less 3,000")
			.isEqualTo(1600);
		List<String> freeKeys = new java.util.ArrayList<>(onFree.reservation().keys());
		java.util.Collections.reverse(freeKeys);
		assertThat(onPro.reservation().keys()).isEqualTo(freeKeys);
	}

}
