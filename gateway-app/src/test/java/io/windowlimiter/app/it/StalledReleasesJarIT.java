package io.windowlimiter.app.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Attack report r2, finding 7, through the packaged jar at its defaults (fail-mode open): a client with a
 * concurrency limit of 2 over a window of 10 minutes has two requests in flight, admitted by Redis, when Redis
 * freezes for 5 s; another client's request shows the guard that Redis hangs; then the two responses end, while
 * Redis is frozen. Their releases failed at once and were dropped: the slots stayed held until their key expired,
 * and the client was refused with {@code Retry-After: 1} for ten minutes. Now the releases are kept and sent once
 * Redis answers again: the client's slots are free within {@link #FREE_WITHIN} of the thaw with no request of its
 * own, and Redis ran a bounded number of scripts after it. {@code MvcStalledReleasesJarIT} runs the same on
 * Server MVC.
 */
class StalledReleasesJarIT {

	/** The bound on every answer while Redis is frozen, at the default settings. */
	static final Duration ANSWER_WITHIN = Duration.ofSeconds(1);

	static final Duration FREEZE = Duration.ofSeconds(5);

	/** How soon after the thaw the client's slots must be free: the guard's next reply, not the slots' window. */
	static final Duration FREE_WITHIN = Duration.ofSeconds(3);

	/**
	 * Scripts Redis may run from the freeze on, with no client sending once thawed: the other client's decision
	 * written before the guard gave it up and the release of what it took, the two kept releases, and the stall's
	 * trial probes (one per stall timeout of the freeze's seconds, bounded well above).
	 */
	static final long SCRIPTS_AFTER_THAW_AT_MOST = 1 + 1 + 2 + 15;

	private RedisProcess redis;

	private HeldJdkDownstream held;

	private GatewayJar gateway;

	@AfterEach
	void stop() throws Exception {
		Resources.close(this.gateway, this.held, this.redis);
	}

	@Test
	void releasesOfResponsesThatEndWhileRedisIsFrozenFreeTheSlotsSoonAfterTheThaw() throws Exception {
		this.redis = RedisProcess.launch();
		this.held = HeldJdkDownstream.start();
		Map<String, Object> slots = new LinkedHashMap<>();
		slots.put("key-resolver", "#{@headerKeyResolver}");
		slots.put("algorithm", "concurrency");
		slots.put("limit", 2);
		slots.put("window", "10m");
		RouteFile routes = new RouteFile(this.held.uri());
		routes.windowRateLimit("slots", this.held.uri(), List.of(slots));
		this.gateway = GatewayJar.start("stalled-releases", this.redis.port(), routes.write());
		frozenWhileResponsesEnd("WebFlux", this.redis, this.held, this.gateway);
	}

	/** The case, on a gateway whose route {@code slots} has the client's concurrency limit of 2 in 10 minutes. */
	static void frozenWhileResponsesEnd(String server, RedisProcess redis, HeldJdkDownstream held, GatewayJar gateway)
			throws Exception {
		String client = "stalled-" + Long.toString(System.nanoTime(), 36);
		RedisClient redisClient = RedisClient.create("redis://127.0.0.1:" + redis.port());
		try (StatefulRedisConnection<String, String> connection = redisClient.connect()) {
			String slotsKey = "wrl:{" + new ClientKeyHash(null).of(client) + "}:slots:cc";
			assertThat(oneRequest(gateway, "/slots/", client).status()).as("decided by Redis before the freeze")
				.isEqualTo(200);
			// its slot is released after its answer: once gone, the two held requests both fit (else the second met
			// it still there, 429, and the slots never came to two)
			long released = System.nanoTime() + Duration.ofSeconds(5).toNanos();
			while (connection.sync().zcard(slotsKey) > 0) {
				assertThat(System.nanoTime()).as("the first request's slot released").isLessThan(released);
				GatewayJar.sleep(10);
			}
			held.hold();
			List<CompletableFuture<KeepAliveConnection.Answer>> inFlight = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				inFlight.add(CompletableFuture.supplyAsync(() -> oneRequest(gateway, "/slots/held", client)));
			}
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (connection.sync().zcard(slotsKey) < 2) {
				assertThat(System.nanoTime()).as("both requests admitted by Redis; answered meanwhile: %s",
						inFlight.stream().filter(CompletableFuture::isDone).map(answer -> answer.join().status()).toList())
					.isLessThan(deadline);
				GatewayJar.sleep(20);
			}
			GatewayJar.sleep(200);
			long failModeBefore = gateway.failModeAnswers();
			long before = RedisInfo.scriptCalls(redis.port());

			redis.freeze();
			long frozenAt = System.nanoTime();
			// another client's request: its decision waits the stall timeout, then the guard takes Redis as hanging
			KeepAliveConnection.Answer other = oneRequest(gateway, "/slots/", "other-" + client);
			assertThat(other.status()).as("fail-mode open").isEqualTo(200);
			assertThat(Duration.ofNanos(other.nanos())).as("an answer while Redis is frozen").isLessThan(ANSWER_WITHIN);
			// the client's two responses end while Redis is frozen and known to hang: their releases cannot go
			long opened = System.nanoTime();
			held.open();
			for (CompletableFuture<KeepAliveConnection.Answer> answer : inFlight) {
				assertThat(answer.get().status()).as("a held request, answered").isEqualTo(200);
			}
			assertThat(Duration.ofNanos(System.nanoTime() - opened)).as("the held responses' end").isLessThan(ANSWER_WITHIN);
			assertThat(gateway.failModeAnswers() - failModeBefore).as("the other client's, by the fail-mode").isEqualTo(1);
			GatewayJar.sleep(Math.max(0, (frozenAt + FREEZE.toNanos() - System.nanoTime()) / 1_000_000));
			redis.thaw();
			long thawed = System.nanoTime();

			// with no request of the client's: its slots come back
			long held2;
			while ((held2 = connection.sync().zcard(slotsKey)) > 0 && System.nanoTime() - thawed < FREE_WITHIN.toNanos()) {
				GatewayJar.sleep(20);
			}
			long tookMillis = (System.nanoTime() - thawed) / 1_000_000;
			long ranAfter = RedisInfo.scriptCallsOnceQuiet(redis.port(), 500, 10_000) - before;
			System.out.println("[stalled releases] " + server + ": slots held " + held2 + ", " + tookMillis
					+ " ms after the thaw; scripts Redis ran from the freeze on, no client sending once thawed: " + ranAfter);
			assertThat(held2).as(server + ": the client's slots held in Redis " + tookMillis
					+ " ms after the thaw (their window is 10 minutes)").isZero();
			assertThat(ranAfter).as(server + ": scripts Redis ran from the freeze on").isLessThanOrEqualTo(SCRIPTS_AFTER_THAW_AT_MOST);

			// the client's own request, decided by Redis again
			long redisBefore = gateway.redisDecisions();
			KeepAliveConnection.Answer next = oneRequest(gateway, "/slots/", client);
			while (gateway.redisDecisions() == redisBefore && System.nanoTime() - thawed < FREE_WITHIN.toNanos() * 2) {
				GatewayJar.sleep(50);
				next = oneRequest(gateway, "/slots/", client);
			}
			assertThat(gateway.redisDecisions()).as(server + ": a request decided by Redis after the thaw").isGreaterThan(redisBefore);
			assertThat(next.status()).as(server + ": the client's request decided by Redis after the thaw").isEqualTo(200);
		}
		finally {
			held.open();
			redisClient.shutdown();
		}
	}

	private static KeepAliveConnection.Answer oneRequest(GatewayJar gateway, String path, String client) {
		try (KeepAliveConnection connection = KeepAliveConnection.open(gateway.port(), Duration.ofSeconds(15))) {
			return connection.get(path, client);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
