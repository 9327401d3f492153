package io.windowlimiter.app.it;

import java.util.List;

import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged Server MVC jar, at its defaults but for a small heap ({@value HeldBodiesCase#HEAP}), under many
 * request bodies that never end on an LLM route ({@link HeldBodiesCase}). Before the buffered-body budget it ran
 * out of heap: Tomcat's acceptor and the limiter's watchdog died, and it answered nothing more until restarted
 * (issue 44, attack round 2).
 */
class MvcLlmBodyMemoryJarIT {

	private RedisProcess redis;

	private FakeLlmServer upstream;

	private GatewayJar gateway;

	@AfterEach
	void stop() throws Exception {
		Resources.close(this.gateway, this.upstream, this.redis);
	}

	@Test
	void bodiesThatNeverEndTakeNoMoreThanTheBudget() throws Exception {
		this.redis = RedisProcess.launch();
		this.upstream = FakeLlmServer.start();
		MvcRouteFile routes = new MvcRouteFile(this.upstream.baseUrl());
		routes.route("llm", this.upstream.baseUrl(), HeldBodiesCase.routeArgs());
		this.gateway = GatewayJar.start("mvc-llm-held-bodies", this.redis.port(), routes.write(),
				List.of(HeldBodiesCase.HEAP), "--management.endpoints.web.exposure.include=health,prometheus");
		HeldBodiesCase.run(this.gateway, "llm", "Server MVC");
	}

}
