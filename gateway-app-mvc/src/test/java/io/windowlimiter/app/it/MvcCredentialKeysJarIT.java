package io.windowlimiter.app.it;

import java.nio.file.Files;

import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 44 item 6 through gateway-app-mvc's packaged jar ({@link CredentialCase}), without a
 * {@code window-rate-limiter.client-key-secret}: clients' API keys are hashed with plain SHA-256
 * ({@code sha256:}), shown nowhere in clear either, and a warning at start-up names the property.
 */
class MvcCredentialKeysJarIT {

	@Test
	void noApiKeyLeavesTheGatewayInClear() throws Exception {
		try (RedisProcess redis = RedisProcess.launch(); JdkDownstream downstream = JdkDownstream.start()) {
			MvcRouteFile routes = new MvcRouteFile(downstream.uri());
			routes.route("llm-keys", downstream.uri(), "apiKeyResolver", CredentialCase.limit());
			routes.route("bearer", downstream.uri(), "headerKeyResolver", CredentialCase.limit());
			try (GatewayJar gateway = GatewayJar.start("mvc-credentials", redis.port(), routes.write(),
					CredentialCase.ARGS.toArray(String[]::new))) {
				new CredentialCase(gateway, redis.port(), "llm-keys", "bearer").run("sha256:");
				assertThat(Files.readString(gateway.log())).as("the warning without a secret")
					.contains("window-rate-limiter.client-key-secret is not set");
			}
		}
	}

}
