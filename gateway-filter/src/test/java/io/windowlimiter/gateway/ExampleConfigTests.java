package io.windowlimiter.gateway;

import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/** The example configuration in config/ starts a gateway with all its routes. */
class ExampleConfigTests {

	@Test
	void theExampleGatewayConfigStarts() {
		RedisTestServer redis = RedisTestServer.get();
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GatewayTestApplication.class)
			.properties("spring.config.additional-location=file:../config/gateway-example.yml", "server.port=0",
					"spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
			.run()) {
			assertThat(context.getBean(RouteLocator.class).getRoutes().collectList().block())
				.extracting(route -> route.getId())
				.containsExactlyInAnyOrder("orders", "login", "reports");
		}
	}

}
