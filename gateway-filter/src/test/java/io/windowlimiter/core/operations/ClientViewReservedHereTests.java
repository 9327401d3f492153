package io.windowlimiter.core.operations;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoop;
import io.windowlimiter.core.Admission;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.operations.RateLimitOperations.ClientStanding;
import io.windowlimiter.core.operations.RateLimitOperations.LimitStanding;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client view's {@code reservedHere} and {@code remaining} agree: a reservation it shows is one the
 * remaining quota has counted. The view's Redis read and the decision it races answer on different threads
 * (each request's own event loop), so which one's answer is handled first is not the order Redis ran them in.
 */
class ClientViewReservedHereTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final RateLimiterCore core = RateLimiterCore.of(new LimitScript(this.redis), this.guard,
			new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
			Clock.systemUTC());

	private final RateLimitOperations operations = new RateLimitOperations(this.core, this.redis,
			new ChangeBroadcast(this.redis, this.core, null, Duration.ofSeconds(5)), DeniedClients.ofDefaults(), null,
			null, Duration.ofSeconds(5));

	private final DefaultEventLoop viewLoop = new DefaultEventLoop();

	@AfterEach
	void close() {
		this.viewLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
		this.guard.close();
	}

	/**
	 * The view is asked from an event loop that is busy when Redis answers it; a call is admitted in that time.
	 * The view was read in Redis before the call reserved, so it shows the call neither in what remains nor as
	 * reserved here.
	 */
	@Test
	void aReservationShownAsHeldHereIsOneTheRemainingQuotaCounts() throws Exception {
		String route = "view-race";
		this.core.configure(route, Map.of("window-rate-limiter.limits[0].algorithm", "fixed-window",
				"window-rate-limiter.limits[0].limit", "1000", "window-rate-limiter.limits[0].window", "1d"));
		String client = "view-" + UUID.randomUUID();
		CountDownLatch sent = new CountDownLatch(1);
		CountDownLatch admitted = new CountDownLatch(1);
		CompletableFuture<ClientStanding> view = new CompletableFuture<>();
		this.viewLoop.execute(() -> {
			this.operations.standing(route, client).subscribe(view::complete, view::completeExceptionally);
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
		this.redis.opsForValue().get("view-race-barrier-" + client).block(TIMEOUT);
		Admission admission = this.core.admit(route, client, new long[] { 300 }, Mono.empty()).block(TIMEOUT);
		assertThat(admission.passes()).isTrue();
		admitted.countDown();

		LimitStanding tokens = view.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).limits().get(0);
		long counted = tokens.limit() - tokens.remaining();
		long shown = (tokens.reservedHere() != null) ? tokens.reservedHere().reserved() : 0;
		assertThat(shown).as("reserved here and counted in Redis: %s", tokens).isLessThanOrEqualTo(counted);
		this.core.settle(admission.reservation(), new long[] { 300 }).block(TIMEOUT);
	}

}
