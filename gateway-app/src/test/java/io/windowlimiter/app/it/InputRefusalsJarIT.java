package io.windowlimiter.app.it;

import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.Test;

/**
 * Issue 44, attack round 2, findings 3 to 5 through gateway-app's packaged jar ({@link InputRefusalsCase}): a
 * compressed LLM body, a hash sent as the key, and different keys in the credential headers.
 */
class InputRefusalsJarIT {

	@Test
	void whatAClientWritesBesideItsBodyAndKeyDoesNotTakeItOutOfItsBudget() throws Exception {
		try (RedisProcess redis = RedisProcess.launch(); FakeLlmServer llm = FakeLlmServer.start();
				JdkDownstream downstream = JdkDownstream.start()) {
			InputRefusalsCase input = new InputRefusalsCase(llm);
			RouteFile routes = new RouteFile(downstream.uri());
			routes.windowRateLimit(InputRefusalsCase.LLM, llm.baseUrl(), List.of(byApiKey(InputRefusalsCase.llmArgs())));
			routes.windowRateLimit(InputRefusalsCase.LISTED, List.of(byApiKey(input.listedArgs())));
			try (GatewayJar gateway = GatewayJar.start("input-refusals", redis.port(), routes.write(),
					input.jarArgs().toArray(String[]::new))) {
				input.run(gateway);
			}
		}
	}

	private static Map<String, Object> byApiKey(Map<String, Object> args) {
		return RouteFile.with(args, "key-resolver", "#{@apiKeyResolver}");
	}

}
