package io.windowlimiter.gateway;

import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.HeldRequests;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * config/gateway-max-delay.yml starts a gateway whose route holds. (What start-up refuses is checked on the
 * check it runs, {@code PolicyRegistry.check}, in MaxDelayConfigUnitTests: a context per case is slow.)
 */
class MaxDelayExampleConfigTests {

	private static ConfigurableApplicationContext start(String... properties) {
		RedisTestServer redis = RedisTestServer.get();
		return new SpringApplicationBuilder(GatewayTestApplication.class)
			.properties("server.port=0", "spring.data.redis.host=" + redis.host(),
					"spring.data.redis.port=" + redis.port())
			.properties(properties)
			// a registry of our own: this test's class path has no metrics auto-configuration
			.initializers(context -> context.getBeanFactory().registerSingleton("meters", new SimpleMeterRegistry()))
			.run();
	}

	@Test
	void theExampleStartsWithItsRouteHoldingUpToTwoSeconds() {
		try (ConfigurableApplicationContext context = start(
				"spring.config.additional-location=file:../config/gateway-max-delay.yml")) {
			CompiledRoute imports = context.getBean(PolicyRegistry.class).route("imports");
			assertThat(imports.policy.maxDelay()).isEqualTo(Duration.ofSeconds(2));
			assertThat(imports.byDefault.arguments.values()).endsWith("2000", "2000");
			assertThat(context.getBean(MeterRegistry.class).get(HeldRequests.GAUGE).gauge().value()).isZero();
		}
	}

}
