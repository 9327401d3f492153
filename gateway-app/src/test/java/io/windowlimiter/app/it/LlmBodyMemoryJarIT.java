package io.windowlimiter.app.it;

import java.util.List;

import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged WebFlux jar, at its defaults but for a small heap ({@value HeldBodiesCase#HEAP}), under many
 * request bodies that never end on an LLM route ({@link HeldBodiesCase}). Before the buffered-body budget it ran
 * out of direct memory: attackers answered 500, honest calls slow then timing out (issue 44, attack round 2).
 */
class LlmBodyMemoryJarIT {

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
		RouteFile routes = new RouteFile(this.upstream.baseUrl());
		java.util.Map<String, Object> args = HeldBodiesCase.routeArgs();
		// the MVC route file names its key resolver itself; this one takes it from the arguments
		args.put("key-resolver", "#{@headerKeyResolver}");
		routes.windowRateLimit("llm", List.of(args));
		this.gateway = GatewayJar.start("llm-held-bodies", this.redis.port(), routes.write(),
				List.of(HeldBodiesCase.HEAP), "--management.endpoints.web.exposure.include=health,prometheus");
		HeldBodiesCase.run(this.gateway, "llm", "WebFlux");
	}

}
