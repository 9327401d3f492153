package io.windowlimiter.app.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * gateway-app-mvc's packaged jar, started fresh at its defaults (Tomcat on platform threads), whose Redis dies
 * before its first request, and under its first burst: {@value RedisDeadFromStartJarIT#REQUESTS} requests,
 * {@value RedisDeadFromStartJarIT#CONNECTIONS} at a time over keep-alive connections, every answer within 1 s
 * and a 200 (fail-mode open). Before issue 44 the slowest took 1.59 to 1.99 s with Redis killed.
 */
class MvcRedisDeadFromStartJarIT {

	private static final Duration UNANSWERED_AFTER = Duration.ofSeconds(5);

	/**
	 * A limited route, one that refunds a 200 (its settle waits on the response: a request admitted before the
	 * kill settles after it), and a route without a limiter (the fresh JVM's own time), a third each.
	 */
	private static final List<String> PATHS = List.of("/wrl/", "/counted/", "/plain/");

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
		MvcRouteFile routes = new MvcRouteFile(this.downstream.uri());
		routes.route("wrl", Map.of("limit", 1_000_000, "window", "1m"));
		routes.route("counted", Map.of("limit", 1_000_000, "window", "1m", "count-statuses", "4xx"));
		// no limiter: what the fresh JVM itself takes, in the same burst
		routes.raw("  - id: plain\n    uri: " + this.downstream.uri() + "\n    predicates: [ \"Path=/plain/**\" ]\n");
		this.gateway = GatewayJar.start(name, this.redis.port(), routes.write());
	}

	@Test
	void redisKilledBeforeTheFirstRequest() {
		start("mvc-dead-before-first");
		this.redis.kill();
		Burst.Result burst = Burst.fire(this.gateway, PATHS,
				RedisDeadFromStartJarIT.REQUESTS, RedisDeadFromStartJarIT.CONNECTIONS, UNANSWERED_AFTER, -1, () -> {
				});
		System.out.println("[mvc dead from start] Redis killed before the first request: " + burst.summary());
		RedisDeadFromStartJarIT.assertAllInTime("Server MVC, Redis killed before the first request", burst, "/plain/",
				List.of("/wrl/", "/counted/"));
	}

	@Test
	void redisKilledUnderTheFirstBurst() {
		start("mvc-dead-under-first");
		Burst.Result burst = Burst.fire(this.gateway, PATHS,
				RedisDeadFromStartJarIT.REQUESTS, RedisDeadFromStartJarIT.CONNECTIONS, UNANSWERED_AFTER,
				RedisDeadFromStartJarIT.CONNECTIONS, this.redis::kill);
		System.out.println("[mvc dead from start] Redis killed under the first burst: " + burst.summary());
		RedisDeadFromStartJarIT.assertAllInTime("Server MVC, Redis killed under the first burst", burst, "/plain/",
				List.of("/wrl/", "/counted/"));
	}

}
