package io.windowlimiter.app.it;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 44 item 6 through gateway-app's packaged jar ({@link CredentialCase}), with a
 * {@code window-rate-limiter.client-key-secret}, as a deployment sets it: clients' API keys are hashed with it
 * ({@code hmac:}) before anything keeps or shows them. The apiKeyResolver route is a {@code WindowRateLimit}
 * filter (as LLM routes are), the Authorization one the gateway's {@code RequestRateLimiter}.
 */
class CredentialKeysJarIT {

	@Test
	void noApiKeyLeavesTheGatewayInClear() throws Exception {
		try (RedisProcess redis = RedisProcess.launch(); JdkDownstream downstream = JdkDownstream.start()) {
			RouteFile routes = new RouteFile(downstream.uri());
			Map<String, Object> api = new java.util.LinkedHashMap<>(CredentialCase.limit());
			api.put("key-resolver", "#{@apiKeyResolver}");
			routes.windowRateLimit("llm-keys", List.of(api));
			routes.route("bearer", "headerKeyResolver", CredentialCase.limit());
			List<String> args = new ArrayList<>(CredentialCase.ARGS);
			args.add("--window-rate-limiter.client-key-secret=it-secret-0123456789abcdef0123456789");
			try (GatewayJar gateway = GatewayJar.start("credentials", redis.port(), routes.write(),
					args.toArray(String[]::new))) {
				new CredentialCase(gateway, redis.port(), "llm-keys", "bearer").run("hmac:");
				assertThat(Files.readString(gateway.log())).as("no warning with a secret")
					.doesNotContain("client-key-secret is not set");
			}
		}
	}

}
