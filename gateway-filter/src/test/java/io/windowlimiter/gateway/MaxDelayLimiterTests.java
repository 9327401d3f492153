package io.windowlimiter.gateway;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.windowlimiter.core.Admission;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.HeldRequests;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The core holds what Redis reserved, on Reactor's timer, for every adapter; here through the gateway's
 * {@code RateLimiter} SPI and the core itself, on a real Redis (its own clock): hold times, the bound on
 * how many one instance holds, and a client that goes away while held.
 */
class MaxDelayLimiterTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final LimitScript script = new LimitScript(RedisTestServer.get().template());

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(10));

	private final WindowRateLimiter limiter = WindowRateLimiter.of(this.script, this.guard,
			new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(10), Clock.systemUTC());

	private final RateLimiterCore core = this.limiter.core();

	private final String client = UUID.randomUUID().toString();

	@AfterEach
	void close() {
		this.guard.close();
	}

	private void route(String routeId, String... args) {
		Map<String, Object> map = new java.util.LinkedHashMap<>();
		for (String arg : args) {
			String[] pair = arg.split("=", 2);
			map.put("window-rate-limiter." + pair[0], pair[1]);
		}
		this.limiter.onApplicationEvent(new FilterArgsEvent(this, routeId, map));
		this.script.load().block(TIMEOUT);
	}

	/** What the limiter answered and how long after subscribing, in ms. */
	private record Timed<T>(T value, long millis) {
	}

	private static <T> Mono<Timed<T>> timed(Mono<T> mono) {
		return Mono.defer(() -> {
			long start = System.nanoTime();
			return mono.map(value -> new Timed<>(value, (System.nanoTime() - start) / 1_000_000));
		});
	}

	@Test
	void aHeldRequestPassesNoSoonerThanItsSlotAndTheRestAreRefused() {
		// 10 a second (one every 100 ms), 2 at once, held up to 300 ms
		route("held", "algorithm=token-bucket", "limit=10", "window=1s", "burst=2", "max-delay=300ms");
		List<Mono<Timed<Admission>>> sent = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			sent.add(timed(this.core.admit("held", this.client, Mono.empty())));
		}
		List<Timed<Admission>> answers = Flux.merge(sent).collectList().block(TIMEOUT);
		List<Long> holds = answers.stream().filter(a -> a.value().passes()).map(a -> a.value().delayMillis()).sorted().toList();
		assertThat(holds).hasSize(5);
		assertThat(holds.subList(0, 2)).containsOnly(0L);
		// each slot is 100 ms after the last; the Redis clock moves on between the six decisions (by tens of ms
		// on a loaded machine), so each hold is at most that, and more than the one before
		for (int i = 2; i < 5; i++) {
			assertThat(holds.get(i)).isGreaterThan(holds.get(i - 1)).isLessThanOrEqualTo(100L * (i - 1));
		}
		for (Timed<Admission> answer : answers) {
			assertThat(answer.millis()).as("held at least as long as it says").isGreaterThanOrEqualTo(answer.value().delayMillis());
			assertThat(answer.millis()).as("and not far longer").isLessThan(answer.value().delayMillis() + 1_000);
		}
		Admission refused = answers.stream().map(Timed::value).filter(a -> !a.passes()).findFirst().orElseThrow();
		assertThat(refused.delayMillis()).isZero();
		assertThat(refused.headers()).containsEntry("Retry-After", "1");

		// through the gateway's SPI: passed once its hold is over
		Timed<Response> viaSpi = timed(this.limiter.isAllowed("held", this.client + "-spi")).block(TIMEOUT);
		assertThat(viaSpi.value().isAllowed()).isTrue();
		List<Timed<Response>> spi = Flux.merge(List.of(timed(this.limiter.isAllowed("held", this.client + "-spi")),
				timed(this.limiter.isAllowed("held", this.client + "-spi")))).collectList().block(TIMEOUT);
		assertThat(spi).allMatch(answer -> answer.value().isAllowed());
		assertThat(spi.stream().mapToLong(Timed::millis).max().orElseThrow()).isBetween(1L, 1_300L);
	}

	@Test
	void anOverrideOnARouteThatHoldsMustReserveExactly() {
		route("override", "algorithm=fixed-window", "limit=5", "window=1s", "max-delay=1s");
		List<RouteLimit> log = PolicyRegistry.overrideLimits("override",
				List.of(Map.of("limit", "50", "window", "1m", "algorithm", "sliding-window-counter")));
		assertThatThrownBy(() -> this.core.checkOverride("override", log))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on override for 'override': limits[0].algorithm is "
					+ "'sliding-window-counter' on route 'override', which holds requests up to "
					+ "window-rate-limiter.max-delay 1s; allowed: token-bucket or fixed-window limits only");
		this.core.checkOverride("override", PolicyRegistry.overrideLimits("override",
				List.of(Map.of("limit", "50", "window", "1m", "algorithm", "token-bucket"))));
	}

	@Test
	void pastTheBoundRequestsAreDecidedForNow() {
		HeldRequests held = new HeldRequests(2);
		this.core.setHeldRequests(held);
		// one every 500 ms, one at once, held up to 2 s
		route("bounded", "algorithm=token-bucket", "limit=2", "window=1s", "burst=1", "max-delay=2s");
		// the burst spent first, alone: a request passed at once returns its leave as soon as it is answered,
		// which, sent beside the others, could be before the last of them asked
		assertThat(this.core.admit("bounded", this.client, Mono.empty()).block(TIMEOUT).delayMillis()).isZero();
		// its leave comes back just after its answer (doFinally): still out, it would leave the four below one
		awaitEveryLeaveReturned(held);
		List<Mono<Admission>> sent = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			sent.add(this.core.admit("bounded", this.client, Mono.empty()));
		}
		List<Admission> answers = Flux.merge(sent).collectList().block(TIMEOUT);
		// two had leave to be held (each keeps it 500 ms or more), the other two were decided for now: refused
		assertThat(answers.stream().filter(Admission::passes).map(Admission::delayMillis))
			.hasSize(2)
			.allMatch(delay -> delay > 0);
		assertThat(answers.stream().filter(a -> !a.passes())).hasSize(2);
		awaitEveryLeaveReturned(held);
		// with leave free again (and no denial cached past the time a hold could take them), two more pass,
		// the second one held at least one interval behind the first
		List<Admission> next = Flux.merge(this.core.admit("bounded", this.client, Mono.empty()),
				this.core.admit("bounded", this.client, Mono.empty())).collectList().block(TIMEOUT);
		assertThat(next).allMatch(Admission::passes);
		assertThat(next.stream().mapToLong(Admission::delayMillis).max().orElseThrow()).isGreaterThan(400);
	}

	@Test
	void aClientThatGoesAwayWhileHeldReturnsItsLeaveAndItsSlotStaysSpent() throws InterruptedException {
		HeldRequests held = new HeldRequests(10);
		this.core.setHeldRequests(held);
		route("gone", "algorithm=token-bucket", "limit=1", "window=1s", "burst=1", "max-delay=3s");
		assertThat(this.core.admit("gone", this.client, Mono.empty()).block(TIMEOUT).delayMillis()).isZero();
		Disposable waiting = this.core.admit("gone", this.client, Mono.empty()).subscribe();
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (held.held() == 0 && System.nanoTime() < deadline) {
			Thread.sleep(5);
		}
		Thread.sleep(100);
		assertThat(held.held()).isEqualTo(1);
		waiting.dispose();
		assertThat(held.held()).isZero();
		// the slot a second from the first stays taken: the next is held about two seconds
		Admission next = this.core.admit("gone", this.client, Mono.empty()).block(TIMEOUT);
		assertThat(next.delayMillis()).isBetween(1_500L, 2_000L);
	}

	/** A leave is returned just after its answer went out (doFinally): the test's thread may look first. */
	private static void awaitEveryLeaveReturned(HeldRequests held) {
		long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
		while (held.held() > 0 && System.nanoTime() < deadline) {
			Thread.onSpinWait();
		}
		assertThat(held.held()).as("every leave returned").isZero();
	}

}
