package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An operator's reset while a client's LLM calls are in flight (attack r3 finding 1, r4 finding 3), on the real
 * Redis: the calls admitted before the reset are settled after it, and what they reserved went with the reset.
 * Before, each settle refunded its pre-reset reservation into the counts the client made after the reset: a call
 * of 8,000 tokens made after it was erased by the refund of an earlier one, and the client had its whole budget
 * again. Now a settle leaves a key reset after its reservation alone; keys of the client on another route, not
 * reset, are settled as always. Route: 20,000 tokens and 100 calls a day, fixed windows.
 */
class ResetDuringCallsTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final RateLimiterCore core = RateLimiterCore.of(new LimitScript(RedisTestServer.get().template()), this.guard,
			new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
			Clock.systemUTC());

	private final String client = "reset-" + UUID.randomUUID();

	@BeforeEach
	void routes() {
		for (String route : List.of("chat", "other")) {
			Map<String, Object> args = new LinkedHashMap<>();
			args.put("window-rate-limiter.limits[0].algorithm", "fixed-window");
			args.put("window-rate-limiter.limits[0].limit", "20000");
			args.put("window-rate-limiter.limits[0].window", "1d");
			args.put("window-rate-limiter.limits[0].unit", "tokens");
			args.put("window-rate-limiter.limits[1].algorithm", "fixed-window");
			args.put("window-rate-limiter.limits[1].limit", "100");
			args.put("window-rate-limiter.limits[1].window", "1d");
			this.core.configure(route, args, SlotRelease.ALWAYS, true);
		}
	}

	@AfterEach
	void close() {
		this.guard.close();
	}

	private Admission call(String route, long tokens) {
		return this.core.admitTokens(route, this.client, tokens, Mono.empty()).block(TIMEOUT);
	}

	private List<Long> left(String route) {
		return this.core.peek(route, this.client).block(TIMEOUT).decisions().stream().map(d -> d.remaining()).toList();
	}

	@Test
	void aCallAdmittedBeforeAResetAndSettledAfterItLeavesTheCountsSinceAlone() {
		Admission before = call("chat", 10_000);
		Admission elsewhere = call("other", 10_000);
		assertThat(left("chat")).containsExactly(10_000L, 99L);
		long deleted = this.core.resetKeys(this.core.keysOf("chat", this.client)).block(TIMEOUT);
		assertThat(deleted).isEqualTo(2);
		assertThat(left("chat")).as("reset").containsExactly(20_000L, 100L);
		Admission after = call("chat", 8_000);
		assertThat(this.core.settleTokens(after.reservation(), 8_000).block(TIMEOUT)).isEqualTo(Settled.UNCHANGED);
		assertThat(this.core.settleTokens(before.reservation(), 100).block(TIMEOUT)).isEqualTo(Settled.APPLIED);
		assertThat(left("chat")).as("the 8,000 used since the reset, not refunded by the call before it")
			.containsExactly(12_000L, 99L);
		assertThat(this.core.settleTokens(elsewhere.reservation(), 100).block(TIMEOUT)).isEqualTo(Settled.APPLIED);
		assertThat(left("other")).as("another route of the client, not reset: refunded as always")
			.containsExactly(19_900L, 99L);
	}

	/** Attack r5, finding 2: a reset of a client never seen wrote a resets hash kept a year; now nothing. */
	@Test
	void aResetOfAClientNeverSeenWritesNothing() {
		List<String> keys = this.core.keysOf("chat", this.client);
		assertThat(this.core.resetKeys(keys).block(TIMEOUT)).isZero();
		assertThat(RedisTestServer.get().template().hasKey(io.windowlimiter.core.key.RedisKeys.resets(keys.get(0)))
			.block(TIMEOUT)).isFalse();
	}

	@Test
	void aLateChargeOfACallAdmittedBeforeAResetIsNotCountedAfterIt() {
		Admission before = call("chat", 1_000);
		this.core.resetKeys(this.core.keysOf("chat", this.client)).block(TIMEOUT);
		this.core.settleTokens(before.reservation(), 5_000).block(TIMEOUT);
		assertThat(left("chat")).as("the reset forgave it").containsExactly(20_000L, 100L);
	}

}
