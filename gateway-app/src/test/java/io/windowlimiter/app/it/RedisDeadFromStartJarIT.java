package io.windowlimiter.app.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.test.RedisProcess;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A freshly started jar whose Redis dies, at its defaults: before its first request, and under its first burst.
 * {@value #REQUESTS} requests, {@value #CONNECTIONS} at a time over keep-alive connections, a third on a
 * {@code RequestRateLimiter} route, a third on a {@code WindowRateLimit} one and a third on a route without a
 * limiter (the fresh JVM's own time, for comparison): every answer within
 * {@link #ANSWER_WITHIN} from the first request after start-up, every one a 200 (fail-mode open). Before issue 44
 * the slowest took 1.69 s on a jar whose Redis died before its first request (0.45 s without a limiter).
 */
class RedisDeadFromStartJarIT {

	/** The promise: every answer within 1 s from the first request after start-up, whatever Redis does. */
	static final Duration ANSWER_WITHIN = Duration.ofSeconds(1);

	/**
	 * How much later than the same burst's answers without a limiter the limited ones may come: a request admitted
	 * just before the kill waits for its settle until the watchdog's next tick (100 ms) sees the connection down,
	 * and a crowded machine runs that tick late. Before issue 44 they came 0.6 to 0.8 s later (the stall timeout).
	 */
	static final Duration LIMITER_SHARE = Duration.ofMillis(400);

	static final int REQUESTS = 400;

	static final int CONNECTIONS = 64;

	/** A third of the connections on each: the two limiters, and a route without one for comparison. */
	private static final List<String> PATHS = List.of("/rrl/", "/wrl/", "/plain/");

	/** A request without an answer by then is a hang, counted apart from slow answers. */
	private static final Duration UNANSWERED_AFTER = Duration.ofSeconds(5);

	private RedisProcess redis;

	private JdkDownstream downstream;

	private GatewayJar gateway;

	@AfterEach
	void stop() throws Exception {
		Resources.close(this.gateway, this.downstream, this.redis);
	}

	private void start(String name) {
		this.redis = RedisProcess.launch();
		this.downstream = JdkDownstream.start();
		RouteFile routes = new RouteFile(this.downstream.uri());
		routes.route("rrl", RouteFile.limit("sliding-window-counter", 1_000_000, "1m"));
		routes.windowRateLimit("wrl", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", 1_000_000,
				"window", "1m")));
		// no limiter: what the fresh JVM itself takes, in the same burst
		routes.raw("  - id: plain\n    uri: " + this.downstream.uri() + "\n    predicates: [ \"Path=/plain/**\" ]\n");
		this.gateway = GatewayJar.start(name, this.redis.port(), routes.write());
	}

	/** Redis killed once the jar is up (health UP, its warm-up done), before the first request. */
	@Test
	void redisKilledBeforeTheFirstRequest() {
		start("dead-before-first");
		this.redis.kill();
		Burst.Result burst = Burst.fire(this.gateway, PATHS, REQUESTS, CONNECTIONS,
				UNANSWERED_AFTER, -1, () -> {
				});
		System.out.println("[dead from start] Redis killed before the first request: " + burst.summary());
		assertAllInTime("Redis killed before the first request", burst, "/plain/", List.of("/rrl/", "/wrl/"));
	}

	/** Redis killed once the first 64 answers came, the rest of the fresh jar's first burst on a dead Redis. */
	@Test
	void redisKilledUnderTheFirstBurst() {
		start("dead-under-first");
		Burst.Result burst = Burst.fire(this.gateway, PATHS, REQUESTS, CONNECTIONS,
				UNANSWERED_AFTER, CONNECTIONS, this.redis::kill);
		System.out.println("[dead from start] Redis killed under the first burst: " + burst.summary());
		assertAllInTime("Redis killed under the first burst", burst, "/plain/", List.of("/rrl/", "/wrl/"));
	}

	/**
	 * Every request answered with a 200, and each limited route's slowest answer within {@link #ANSWER_WITHIN}, or,
	 * where the fresh JVM's own answers without a limiter in the same burst were slower than that, no more than
	 * {@link #LIMITER_SHARE} behind them. On this 2-core machine a fresh JVM's first 64 connections at once take
	 * 1.1 to 1.8 s without any limiter (measured on the jars before and after issue 44 alike, Redis dead): that part
	 * is the JVM's, which no limiter can take away; what the limiter adds is what it must keep small. Before issue
	 * 44 the limited routes came 0.5 to 0.8 s behind the route without one (the stall timeout on a connection
	 * Lettuce knew was closed).
	 */
	static void assertAllInTime(String what, Burst.Result burst, String plainPath, List<String> limitedPaths) {
		SoftAssertions softly = new SoftAssertions();
		softly.assertThat(burst.tally().unanswered()).as(what + ": unanswered, " + burst.summary()).isZero();
		softly.assertThat(burst.tally().status(200)).as(what + ": 200s (fail-mode open), " + burst.summary())
			.isEqualTo(REQUESTS);
		long plain = burst.slowestMillis(plainPath);
		long bound = Math.max(ANSWER_WITHIN.toMillis(), plain + LIMITER_SHARE.toMillis());
		for (String limited : limitedPaths) {
			softly.assertThat(burst.slowestMillis(limited))
				.as(what + ": the slowest answer on " + limited + " (ms; " + plain + " ms without a limiter), "
						+ burst.summary())
				.isLessThan(bound);
		}
		softly.assertAll();
	}

}
