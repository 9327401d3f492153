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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client's concurrency slots across a Redis freeze, through the packaged jar at its defaults (fail-mode open): a
 * client with a concurrency limit of 2 over a window of 10 minutes. One jar serves both cases (a jar start costs
 * 8-10 s of the suite); each has a client of its own and counts what Redis ran from its own freeze on.
 * <ul>
 * <li>Issue 44 item 4, as it was found: the client sends two requests while Redis is frozen. The guard gives both
 * decisions up (the fail-mode lets them through), but their scripts were written and run when Redis thaws: they took
 * both slots, nothing released them, and the client was refused with {@code Retry-After: 1} for ten minutes. Now the
 * slots of given-up decisions are released once Redis answers again.</li>
 * <li>Attack report r2, finding 7: the client has two requests in flight, admitted by Redis, when Redis freezes for
 * 5 s; another client's request shows the guard that Redis hangs; then the two responses end, while Redis is frozen.
 * Their releases failed at once and were dropped: the slots stayed held until their key expired. Now the releases
 * are kept and sent once Redis answers again.</li>
 * </ul>
 * Either way the client's slots are free within {@link #FREE_WITHIN} of the thaw with no request of its own, and
 * Redis ran a bounded number of scripts after it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlotsThroughAFreezeJarIT {

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

	/**
	 * Scripts Redis may run from the freeze on in the given-up case, with no client sending once thawed: the two
	 * admissions, their two releases and the stall's trial probes (one per stall timeout of the freeze's seconds,
	 * bounded well above).
	 */
	private static final long GIVEN_UP_SCRIPTS_AT_MOST = 2 + 2 + 10;

	private RedisProcess redis;

	private HeldJdkDownstream held;

	private GatewayJar gateway;

	@BeforeAll
	void start() {
		this.redis = RedisProcess.launch();
		this.held = HeldJdkDownstream.start();
		Map<String, Object> slots = new LinkedHashMap<>();
		slots.put("key-resolver", "#{@headerKeyResolver}");
		slots.put("algorithm", "concurrency");
		slots.put("limit", 2);
		slots.put("window", "10m");
		RouteFile routes = new RouteFile(this.held.uri());
		routes.windowRateLimit("slots", this.held.uri(), List.of(slots));
		this.gateway = GatewayJar.start("slots-frozen", this.redis.port(), routes.write());
	}

	@AfterAll
	void stop() throws Exception {
		Resources.close(this.gateway, this.held, this.redis);
	}

	@Test
	void releasesOfResponsesThatEndWhileRedisIsFrozenFreeTheSlotsSoonAfterTheThaw() throws Exception {
		frozenWhileResponsesEnd("WebFlux", this.redis, this.held, this.gateway);
	}

	@Test
	void slotsTakenByDecisionsGivenUpInAFreezeAreFreeSoonAfterTheThaw() throws Exception {
		String client = "slots-" + Long.toString(System.nanoTime(), 36);
		RedisClient redisClient = RedisClient.create("redis://127.0.0.1:" + this.redis.port());
		try (StatefulRedisConnection<String, String> connection = redisClient.connect()) {
			givenUpSlots(client, connection);
		}
		finally {
			redisClient.shutdown();
		}
	}

	private void givenUpSlots(String client, StatefulRedisConnection<String, String> connection) throws Exception {
		long failModeBefore = this.gateway.failModeAnswers();
		assertThat(oneRequest(this.gateway, "/slots/", client).status()).as("decided by Redis before the freeze")
			.isEqualTo(200);
		assertThat(this.gateway.failModeAnswers() - failModeBefore).isZero();
		long released = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (slotsHeld(connection, client) > 0) {
			assertThat(System.nanoTime()).as("released once answered").isLessThan(released);
			GatewayJar.sleep(10);
		}

		long before = RedisInfo.scriptCalls(this.redis.port());
		this.redis.freeze();
		List<CompletableFuture<KeepAliveConnection.Answer>> during = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			during.add(CompletableFuture.supplyAsync(() -> oneRequest(this.gateway, "/slots/", client)));
		}
		for (CompletableFuture<KeepAliveConnection.Answer> answer : during) {
			KeepAliveConnection.Answer got = answer.get();
			assertThat(got.status()).as("fail-mode open").isEqualTo(200);
			assertThat(Duration.ofNanos(got.nanos())).as("an answer while Redis is frozen").isLessThan(ANSWER_WITHIN);
		}
		assertThat(this.gateway.failModeAnswers() - failModeBefore).as("both answered by the fail-mode").isEqualTo(2);
		GatewayJar.sleep(2_000);
		this.redis.thaw();

		long thawed = System.nanoTime();
		// what the gateway wrote before giving up runs first; then the releases, once the guard has seen Redis answer
		long ranAfter = RedisInfo.scriptCallsOnceQuiet(this.redis.port(), 500, 10_000) - before;
		long held = slotsHeld(connection, client);
		long tookMillis = (System.nanoTime() - thawed) / 1_000_000;
		System.out.println("[given-up slots] scripts Redis ran from the freeze on: " + ranAfter + "; slots held once it "
				+ "was quiet, " + tookMillis + " ms after the thaw: " + held);
		assertThat(ranAfter).as("scripts Redis ran from the freeze on, no client sending once thawed: the two "
				+ "admissions written before the guard gave them up, at least")
			.isBetween(2L, GIVEN_UP_SCRIPTS_AT_MOST);
		assertThat(held).as("slots held in Redis " + tookMillis + " ms after the thaw (their window is 10 minutes)")
			.isZero();

		// the client's own requests, decided by Redis again (the first may be answered while the guard's trial
		// finds Redis back): refused with 429 while the slots are held, for ten minutes before issue 44
		long redisBefore = this.gateway.redisDecisions();
		KeepAliveConnection.Answer next = oneRequest(this.gateway, "/slots/", client);
		while (this.gateway.redisDecisions() == redisBefore && System.nanoTime() - thawed < FREE_WITHIN.toNanos()) {
			GatewayJar.sleep(50);
			next = oneRequest(this.gateway, "/slots/", client);
		}
		assertThat(this.gateway.redisDecisions()).as("a request decided by Redis within " + FREE_WITHIN
				+ " of the thaw").isGreaterThan(redisBefore);
		assertThat(next.status()).as("the client's request decided by Redis after the thaw").isEqualTo(200);
		List<CompletableFuture<KeepAliveConnection.Answer>> after = List.of(
				CompletableFuture.supplyAsync(() -> oneRequest(this.gateway, "/slots/", client)),
				CompletableFuture.supplyAsync(() -> oneRequest(this.gateway, "/slots/", client)));
		for (CompletableFuture<KeepAliveConnection.Answer> answer : after) {
			assertThat(answer.get().status()).as("the client's two slots after the thaw").isEqualTo(200);
		}
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

	/** The client's slots in Redis: its X-API-Key, a credential, is hashed without a secret (none is set). */
	private static long slotsHeld(StatefulRedisConnection<String, String> connection, String client) {
		return connection.sync().zcard("wrl:{" + new ClientKeyHash(null).of(client) + "}:slots:cc");
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
