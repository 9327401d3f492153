package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoop;
import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.operations.ChangeBroadcast;
import io.windowlimiter.core.operations.DeniedClients;
import io.windowlimiter.core.operations.RateLimitOperations;
import io.windowlimiter.core.operations.RateLimitOperations.ClientStanding;
import io.windowlimiter.core.operations.RateLimitOperations.LimitStanding;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

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
		configure(this.core, id, routeArgs(algorithm));
		return id;
	}

	/** As an LLM filter gives the core its limits: they count tokens where a limit says so. */
	static void configure(RateLimiterCore core, String id, Map<String, Object> args) {
		core.configure(id, args, SlotRelease.ALWAYS, true);
	}

	private static Map<String, Object> routeArgs(String algorithm) {
		Map<String, Object> args = new HashMap<>();
		args.put("window-rate-limiter.limits[0].algorithm", algorithm);
		args.put("window-rate-limiter.limits[0].limit", "1000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].algorithm", "sliding-log");
		args.put("window-rate-limiter.limits[1].limit", "5");
		args.put("window-rate-limiter.limits[1].window", "1d");
		return args;
	}

	private Admission admit(String route, long tokens) {
		return this.core.admitTokens(route, this.client, tokens, Mono.empty()).block(TIMEOUT);
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

	@Test
	void theReservationsNotYetSettledHereAreShownByLimitKeyUntilSettledWhicheverWay() {
		String route = route("fixed-window");
		Reservation first = admit(route, 300).reservation();
		Reservation second = admit(route, 200).reservation();
		String tokens = first.keys().get(0);
		String requests = first.keys().get(1);
		assertThat(this.core.reservedHere(tokens)).isEqualTo(new ReservationsHere.Held(2, 500));
		assertThat(this.core.reservedHere(requests)).isEqualTo(new ReservationsHere.Held(2, 2));
		// a refused call reserved nothing
		assertThat(admit(route, 600).passes()).isFalse();
		assertThat(this.core.reservedHere(tokens)).isEqualTo(new ReservationsHere.Held(2, 500));
		// settled to its usage: out, and what the window holds of it is now settled
		assertThat(this.core.settle(first, new long[] { 40, 1 }).block(TIMEOUT)).isEqualTo(Settled.APPLIED);
		assertThat(this.core.reservedHere(tokens)).isEqualTo(new ReservationsHere.Held(1, 200));
		assertThat(remaining(route, 0)).isEqualTo(1000 - 40 - 200);
		// settled to exactly its estimate: nothing sent to Redis, out all the same
		assertThat(this.core.settle(second, new long[] { 200, 1 }).block(TIMEOUT)).isEqualTo(Settled.UNCHANGED);
		assertThat(this.core.reservedHere(tokens)).isNull();
		assertThat(this.core.reservedHere(requests)).isNull();
		assertThat(this.core.settle(second, new long[] { 0, 0 }).block(TIMEOUT)).isEqualTo(Settled.DUPLICATE);
		assertThat(this.core.reservationsHere().keys()).isZero();
	}

	@Test
	void anotherInstancesReservationsAreNotShownHere() {
		RateLimiterCore other = RateLimiterCore.of(new LimitScript(this.redis), this.guard,
				new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
				Clock.systemUTC());
		String route = route("fixed-window");
		configure(other, route, routeArgs("fixed-window"));
		Reservation there = other.admitTokens(route, this.client, 300, Mono.empty()).block(TIMEOUT).reservation();
		assertThat(other.reservedHere(there.keys().get(0))).isEqualTo(new ReservationsHere.Held(1, 300));
		assertThat(this.core.reservedHere(there.keys().get(0))).as("in the other instance's memory only").isNull();
		assertThat(remaining(route, 0)).as("counted in Redis, as reserved").isEqualTo(700);
		other.settle(there, new long[] { 10, 1 }).block(TIMEOUT);
	}

	/**
	 * The client view's {@code reservedHere} and {@code remaining} agree. The view's Redis read and a decision
	 * racing it answer on different threads (each request's own event loop), so which answer is handled first
	 * is not the order Redis ran them in. Here the view is asked from an event loop that is busy when Redis
	 * answers it; a call is admitted in that time. The view was read in Redis before the call reserved, so it
	 * shows the call neither in what remains nor as reserved here.
	 */
	@Test
	void theClientViewShowsAsReservedHereOnlyWhatItsRemainingQuotaCounts() throws Exception {
		String route = route("fixed-window");
		DefaultEventLoop viewLoop = new DefaultEventLoop();
		CountDownLatch sent = new CountDownLatch(1);
		CountDownLatch admitted = new CountDownLatch(1);
		CompletableFuture<ClientStanding> view = new CompletableFuture<>();
		viewLoop.execute(() -> {
			operations().standing(route, this.client).subscribe(view::complete, view::completeExceptionally);
			sent.countDown();
			try {
				// the loop is busy: Redis's answer to the view waits here while the call is admitted
				admitted.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		assertThat(sent.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
		// Redis has run the view's read by the time it runs a command sent after it, on the same connection
		this.redis.opsForValue().get("view-race-barrier-" + this.client).block(TIMEOUT);
		Admission admission = admit(route, 300);
		assertThat(admission.passes()).isTrue();
		admitted.countDown();

		LimitStanding tokens = view.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).limits().get(0);
		long counted = tokens.limit().longValue() - tokens.remaining().longValue();
		long shown = (tokens.reservedHere() != null) ? tokens.reservedHere().reserved().longValue() : 0;
		assertThat(shown).as("reserved here and counted in Redis: %s", tokens).isLessThanOrEqualTo(counted);
		this.core.settle(admission.reservation(), new long[] { 300, 1 }).block(TIMEOUT);
		viewLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
	}

	/** The operators' API over this test's core (the client view). */
	private RateLimitOperations operations() {
		return new RateLimitOperations(this.core, this.redis,
				new ChangeBroadcast(this.redis, this.core, null, Duration.ofSeconds(5)), DeniedClients.ofDefaults(), null,
				null, Duration.ofSeconds(5));
	}

	/** 2,000 clients with a call each: none is left once settled, even when some settles Redis never took. */
	@Test
	void freshClientsByTheThousandLeaveNothingOnceSettled() {
		String route = route("fixed-window");
		List<Reservation> reservations = new ArrayList<>();
		for (int i = 0; i < 2_000; i++) {
			reservations.add(this.core.admitTokens(route, "fresh-" + i + "-" + this.client, 10, Mono.empty())
				.block(TIMEOUT)
				.reservation());
		}
		assertThat(this.core.reservationsHere().keys()).isEqualTo(4_000);
		Flux.fromIterable(reservations)
			.flatMap(reservation -> this.core.settle(reservation, new long[] { 3, 1 }), 64)
			.blockLast(TIMEOUT.multipliedBy(6));
		assertThat(this.core.reservationsHere().keys()).isZero();
	}

	/** One an adapter never settles leaves once its limits' longest window has passed: found by the next one. */
	@Test
	void aReservationNeverSettledLeavesAfterItsLongestWindow() {
		MovableClock clock = new MovableClock();
		RateLimiterCore core = RateLimiterCore.of(new LimitScript(this.redis), this.guard,
				new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
				clock);
		String route = "llm-unsettled";
		configure(core, route, routeArgs("fixed-window"));
		Reservation left = core.admitTokens(route, this.client, 300, Mono.empty()).block(TIMEOUT).reservation();
		String key = left.keys().get(0);
		assertThat(core.reservedHere(key)).isEqualTo(new ReservationsHere.Held(1, 300));
		// a day (the longest window) and a second later, by this instance's clock
		clock.ahead(Duration.ofDays(1).plusSeconds(1));
		assertThat(core.reservedHere(key)).as("counts in no window any more").isNull();
		assertThat(core.reservationsHere().keys()).as("its keys are still held").isEqualTo(2);
		// other clients' calls: the 1,024th reservation sweeps every key (those of the 1,022 before it too, which
		// Redis's clock made a day before this instance's), and only its own two are left
		for (int i = 0; i < 1_023; i++) {
			core.admitTokens(route, "sweep-" + i + "-" + this.client, 1, Mono.empty()).block(TIMEOUT);
		}
		assertThat(core.reservationsHere().keys()).isEqualTo(2);
	}

	/** The system clock, moved ahead by the test. */
	private static final class MovableClock extends Clock {

		private volatile Duration ahead = Duration.ZERO;

		void ahead(Duration by) {
			this.ahead = this.ahead.plus(by);
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Instant instant() {
			return Instant.now().plus(this.ahead);
		}

	}

	@Test
	void anEstimateAboveTheSmallestTokenLimitIsReservedAtThatLimitSoTheFirstCallPasses() {
		String route = route("fixed-window");
		Admission first = admit(route, 5_000);
		assertThat(first.passes()).isTrue();
		assertThat(first.reservation().costs()).containsExactly(1000, 1);
		assertThat(first.reservation().tokens()).isEqualTo(1000);
		assertThat(first.reservation().remainingTokens()).isZero();
		assertThat(this.core.settleTokens(first.reservation(), 10).block(TIMEOUT)).isEqualTo(Settled.APPLIED);
		assertThat(remaining(route, 0)).isEqualTo(990);
		assertThat(remaining(route, 1)).as("the request limit keeps its 1").isEqualTo(4);
		Reservation second = admit(route, 10).reservation();
		assertThat(this.core.settleTokens(second, 10).block(TIMEOUT)).isEqualTo(Settled.UNCHANGED);
		assertThat(remaining(route, 0)).isEqualTo(980);
	}

}
