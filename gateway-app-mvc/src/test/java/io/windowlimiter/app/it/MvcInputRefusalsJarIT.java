package io.windowlimiter.app.it;

import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.Test;

/**
 * Issue 44, attack round 2, findings 3 to 5 through gateway-app-mvc's packaged jar ({@link InputRefusalsCase}): a
 * compressed LLM body, a hash sent as the key, and different keys in the credential headers.
 */
class MvcInputRefusalsJarIT {

	@Test
	void whatAClientWritesBesideItsBodyAndKeyDoesNotTakeItOutOfItsBudget() throws Exception {
		try (RedisProcess redis = RedisProcess.launch(); FakeLlmServer llm = FakeLlmServer.start();
				JdkDownstream downstream = JdkDownstream.start()) {
			InputRefusalsCase input = new InputRefusalsCase(llm);
			MvcRouteFile routes = new MvcRouteFile(downstream.uri());
			routes.route(InputRefusalsCase.LLM, llm.baseUrl(), "apiKeyResolver", InputRefusalsCase.llmArgs());
			routes.route(InputRefusalsCase.LISTED, downstream.uri(), "apiKeyResolver", input.listedArgs());
			try (GatewayJar gateway = GatewayJar.start("mvc-input-refusals", redis.port(), routes.write(),
					input.jarArgs().toArray(String[]::new))) {
				input.run(gateway);
			}
		}
	}

}
