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
 * {@value #REQUESTS} requests, {@value #CONNECTIONS} at a time over keep-alive connections, half on a
 * {@code RequestRateLimiter} route and half on a {@code WindowRateLimit} one: every answer within
 * {@link #ANSWER_WITHIN} from the first request after start-up, every one a 200 (fail-mode open). Before issue 44
 * the slowest took 1.69 s on a jar whose Redis died before its first request (0.45 s without a limiter).
 */
class RedisDeadFromStartJarIT {

	/** The promise: every answer within 1 s from the first request after start-up, whatever Redis does. */
	static final Duration ANSWER_WITHIN = Duration.ofSeconds(1);

	static final int REQUESTS = 400;

	static final int CONNECTIONS = 64;

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
		this.gateway = GatewayJar.start(name, this.redis.port(), routes.write());
	}

	/** Redis killed once the jar is up (health UP, its warm-up done), before the first request. */
	@Test
	void redisKilledBeforeTheFirstRequest() {
		start("dead-before-first");
		this.redis.kill();
		Burst.Result burst = Burst.fire(this.gateway, List.of("/rrl/", "/wrl/"), REQUESTS, CONNECTIONS,
				UNANSWERED_AFTER, -1, () -> {
				});
		System.out.println("[dead from start] Redis killed before the first request: " + burst.summary());
		assertAllInTime("Redis killed before the first request", burst);
	}

	/** Redis killed once the first 64 answers came, the rest of the fresh jar's first burst on a dead Redis. */
	@Test
	void redisKilledUnderTheFirstBurst() {
		start("dead-under-first");
		Burst.Result burst = Burst.fire(this.gateway, List.of("/rrl/", "/wrl/"), REQUESTS, CONNECTIONS,
				UNANSWERED_AFTER, CONNECTIONS, this.redis::kill);
		System.out.println("[dead from start] Redis killed under the first burst: " + burst.summary());
		assertAllInTime("Redis killed under the first burst", burst);
	}

	static void assertAllInTime(String what, Burst.Result burst) {
		SoftAssertions softly = new SoftAssertions();
		softly.assertThat(burst.tally().unanswered()).as(what + ": unanswered, " + burst.summary()).isZero();
		softly.assertThat(burst.tally().status(200)).as(what + ": 200s (fail-mode open), " + burst.summary())
			.isEqualTo(REQUESTS);
		softly.assertThat(burst.slowest()).as(what + ": the slowest answer, " + burst.summary()).isLessThan(ANSWER_WITHIN);
		softly.assertAll();
	}

}
