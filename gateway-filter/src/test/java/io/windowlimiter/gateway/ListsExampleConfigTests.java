package io.windowlimiter.gateway;

import java.time.Duration;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.access.ClientAccess;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/** config/gateway-lists.yml starts a gateway whose lists decide as its comments say. */
class ListsExampleConfigTests {

	@Test
	void theListsExampleStartsAndItsListsDecide() {
		RedisTestServer redis = RedisTestServer.get();
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GatewayTestApplication.class)
			.properties("spring.config.additional-location=file:../config/gateway-lists.yml", "server.port=0",
					"spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
			.run()) {
			PolicyRegistry registry = context.getBean(PolicyRegistry.class);
			assertThat(registry.route("public-api").lists.allow().matches("2001:db8:42:7::/64")).isTrue();
			assertThat(registry.route("public-api").lists.deny().matches("192.0.2.200")).isTrue();
			assertThat(registry.route("partner-api").lists.allow().entries()).containsExactly("billing-job");
			assertThat(context.getBean(ClientAccess.class).gateway().deny().entries())
				.containsExactly("revoked-key-2025-11");
			RateLimiterCore core = context.getBean(RateLimiterCore.class);
			assertThat(core.admit("partner-api", "revoked-key-2025-11", Mono.empty()).block(Duration.ofSeconds(10))
				.status()).isEqualTo(403);
			assertThat(core.admit("public-api", "synthetic-monitor", Mono.empty()).block(Duration.ofSeconds(10))
				.passes()).isTrue();
		}
	}

}
