package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A cost per limit in one decision and one settle, as LLM routes use them (tokens in the token limit, 1 in the
 * request limit), through the core on the real Redis, for each algorithm of the token limit.
 */
class LlmCostsPerLimitTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final RateLimiterCore core = RateLimiterCore.of(new LimitScript(this.redis), this.guard,
			new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
			Clock.systemUTC());

	private final String client = "llm-" + UUID.randomUUID();

	@AfterEach
	void close() {
		this.guard.close();
	}

	private String route(String algorithm) {
		String id = "llm-" + algorithm;
		Map<String, Object> args = new HashMap<>();
		args.put("window-rate-limiter.limits[0].algorithm", algorithm);
		args.put("window-rate-limiter.limits[0].limit", "1000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[1].algorithm", "sliding-log");
		args.put("window-rate-limiter.limits[1].limit", "5");
		args.put("window-rate-limiter.limits[1].window", "1d");
		this.core.configure(id, args);
		return id;
	}

	private Admission admit(String route, long tokens) {
		return this.core.admit(route, this.client, new long[] { tokens, 1 }, Mono.empty()).block(TIMEOUT);
	}

	private long remaining(String route, int limit) {
		return this.core.peek(route, this.client).block(TIMEOUT).decisions().get(limit).remaining();
	}

	@ParameterizedTest
	@ValueSource(strings = { "fixed-window", "sliding-window-counter", "sliding-log" })
	void eachLimitReservesItsOwnCostAllOrNothingAndSettlesItsOwn(String algorithm) {
		String route = route(algorithm);
		Admission first = admit(route, 300);
		assertThat(first.passes()).isTrue();
		Reservation reservation = first.reservation();
		assertThat(reservation.costs()).containsExactly(300, 1);
		assertThat(reservation.remainingAfter(0)).as("tokens left after the reservation").isEqualTo(700);
		assertThat(reservation.remainingAfter(1)).isEqualTo(4);
		assertThat(remaining(route, 0)).isEqualTo(700);
		assertThat(remaining(route, 1)).isEqualTo(4);

		Admission tooMany = admit(route, 800);
		assertThat(tooMany.passes()).isFalse();
		assertThat(tooMany.reservation()).isNull();
		assertThat(remaining(route, 1)).as("refused by the token limit: the request limit counted nothing").isEqualTo(4);

		assertThat(this.core.settle(reservation, new long[] { 30, 1 }).block(TIMEOUT)).isEqualTo(Settled.APPLIED);
		assertThat(remaining(route, 0)).as("refunded to the usage").isEqualTo(970);
		assertThat(remaining(route, 1)).as("the request stays counted").isEqualTo(4);
		assertThat(this.core.settle(reservation, new long[] { 0, 0 }).block(TIMEOUT)).isEqualTo(Settled.DUPLICATE);
		assertThat(remaining(route, 0)).isEqualTo(970);

		// a late charge: the upstream used more than estimated, even past the budget
		Reservation second = admit(route, 300).reservation();
		assertThat(this.core.settle(second, new long[] { 1200, 1 }).block(TIMEOUT)).isEqualTo(Settled.APPLIED);
		assertThat(remaining(route, 0)).isZero();
		assertThat(admit(route, 1).passes()).as("later requests wait").isFalse();
		assertThat(remaining(route, 1)).isEqualTo(3);
	}

	@ParameterizedTest
	@ValueSource(strings = { "fixed-window" })
	void costsThatDoNotFitAreRefusedBeforeRedis(String algorithm) {
		String route = route(algorithm);
		assertThatThrownBy(() -> admit(route, 1001)).isInstanceOf(CostAboveLimitException.class);
		assertThatThrownBy(() -> this.core.admit(route, this.client, new long[] { 1 }, Mono.empty()).block(TIMEOUT))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("2 limits");
		assertThat(this.core.settle(admit(route, 10).reservation(), new long[] { 10, 1 }).block(TIMEOUT))
			.isEqualTo(Settled.UNCHANGED);
		assertThat(remaining(route, 0)).isEqualTo(990);
	}

}
