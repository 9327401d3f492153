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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 44 item 4, as it was found, through the packaged jar at its defaults (fail-mode open): a client with a
 * concurrency limit of 2 over a window of 10 minutes sends two requests while Redis is frozen. The guard gives
 * both decisions up (the fail-mode lets them through), but their scripts were written and run when Redis thaws:
 * they took both slots, nothing released them, and the client was refused with {@code Retry-After: 1} for ten
 * minutes. Now the slots of given-up decisions are released once Redis answers again: the client passes again
 * within {@link #FREE_WITHIN} of the thaw, and Redis ran a bounded number of scripts after it.
 */
class GivenUpSlotsJarIT {

	/** The bound on every answer while Redis is frozen, at the default settings. */
	private static final Duration ANSWER_WITHIN = Duration.ofSeconds(1);

	/** How soon after the thaw the client's slots must be free: the guard's next reply, not the slots' window. */
	private static final Duration FREE_WITHIN = Duration.ofSeconds(3);

	/**
	 * Scripts Redis may run from the freeze on, with no client sending once thawed: the two admissions, their two
	 * releases and the stall's trial probes (one per stall timeout of the freeze's seconds, bounded well above).
	 */
	private static final long SCRIPTS_AFTER_THAW_AT_MOST = 2 + 2 + 10;

	private final String client = "slots-" + Long.toString(System.nanoTime(), 36);

	private RedisProcess redis;

	private JdkDownstream downstream;

	private GatewayJar gateway;

	private RedisClient redisClient;

	private StatefulRedisConnection<String, String> connection;

	@BeforeEach
	void start() {
		this.redis = RedisProcess.launch();
		this.downstream = JdkDownstream.start();
		Map<String, Object> slots = new LinkedHashMap<>();
		slots.put("key-resolver", "#{@headerKeyResolver}");
		slots.put("algorithm", "concurrency");
		slots.put("limit", 2);
		slots.put("window", "10m");
		RouteFile routes = new RouteFile(this.downstream.uri());
		routes.windowRateLimit("slots", List.of(slots));
		this.gateway = GatewayJar.start("given-up-slots", this.redis.port(), routes.write());
		this.redisClient = RedisClient.create("redis://127.0.0.1:" + this.redis.port());
		this.connection = this.redisClient.connect();
	}

	@AfterEach
	void stop() throws Exception {
		if (this.connection != null) {
			this.connection.close();
			this.redisClient.shutdown();
		}
		Resources.close(this.gateway, this.downstream, this.redis);
	}

	@Test
	void slotsTakenByDecisionsGivenUpInAFreezeAreFreeSoonAfterTheThaw() throws Exception {
		try (KeepAliveConnection warm = KeepAliveConnection.open(this.gateway.port(), Duration.ofSeconds(5))) {
			assertThat(warm.get("/slots/", this.client).status()).as("decided by Redis before the freeze").isEqualTo(200);
		}
		assertThat(this.gateway.failModeAnswers()).isZero();
		assertThat(slotsHeld()).as("released once answered").isZero();

		long before = RedisInfo.scriptCalls(this.redis.port());
		this.redis.freeze();
		List<CompletableFuture<KeepAliveConnection.Answer>> during = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			during.add(CompletableFuture.supplyAsync(this::oneRequest));
		}
		for (CompletableFuture<KeepAliveConnection.Answer> answer : during) {
			KeepAliveConnection.Answer got = answer.get();
			assertThat(got.status()).as("fail-mode open").isEqualTo(200);
			assertThat(Duration.ofNanos(got.nanos())).as("an answer while Redis is frozen").isLessThan(ANSWER_WITHIN);
		}
		assertThat(this.gateway.failModeAnswers()).as("both answered by the fail-mode").isEqualTo(2);
		GatewayJar.sleep(2_000);
		this.redis.thaw();

		long thawed = System.nanoTime();
		// what the gateway wrote before giving up runs first; then the releases, once the guard has seen Redis answer
		long ranAfter = RedisInfo.scriptCallsOnceQuiet(this.redis.port(), 500, 10_000) - before;
		long held = slotsHeld();
		long tookMillis = (System.nanoTime() - thawed) / 1_000_000;
		System.out.println("[given-up slots] scripts Redis ran from the freeze on: " + ranAfter + "; slots held once it "
				+ "was quiet, " + tookMillis + " ms after the thaw: " + held);
		assertThat(ranAfter).as("scripts Redis ran from the freeze on, no client sending once thawed: the two "
				+ "admissions written before the guard gave them up, at least")
			.isBetween(2L, SCRIPTS_AFTER_THAW_AT_MOST);
		assertThat(held).as("slots held in Redis " + tookMillis + " ms after the thaw (their window is 10 minutes)")
			.isZero();

		// the client's own requests, decided by Redis again (the first may be answered while the guard's trial
		// finds Redis back): refused with 429 while the slots are held, for ten minutes before issue 44
		long redisBefore = this.gateway.redisDecisions();
		KeepAliveConnection.Answer next = oneRequest();
		while (this.gateway.redisDecisions() == redisBefore && System.nanoTime() - thawed < FREE_WITHIN.toNanos()) {
			GatewayJar.sleep(50);
			next = oneRequest();
		}
		assertThat(this.gateway.redisDecisions()).as("a request decided by Redis within " + FREE_WITHIN
				+ " of the thaw").isGreaterThan(redisBefore);
		assertThat(next.status()).as("the client's request decided by Redis after the thaw").isEqualTo(200);
		List<CompletableFuture<KeepAliveConnection.Answer>> after = List.of(
				CompletableFuture.supplyAsync(this::oneRequest), CompletableFuture.supplyAsync(this::oneRequest));
		for (CompletableFuture<KeepAliveConnection.Answer> answer : after) {
			assertThat(answer.get().status()).as("the client's two slots after the thaw").isEqualTo(200);
		}
	}

	private KeepAliveConnection.Answer oneRequest() {
		try (KeepAliveConnection connection = KeepAliveConnection.open(this.gateway.port(), Duration.ofSeconds(5))) {
			return connection.get("/slots/", this.client);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** The client's slots in Redis: its X-API-Key, a credential, is hashed without a secret (none is set). */
	private long slotsHeld() {
		return this.connection.sync().zcard("wrl:{" + new ClientKeyHash(null).of(this.client) + "}:slots:cc");
	}

}
