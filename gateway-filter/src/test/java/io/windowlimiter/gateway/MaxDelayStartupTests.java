package io.windowlimiter.gateway;

import java.time.Duration;
import java.util.List;

import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * config/gateway-max-delay.yml starts a gateway whose route holds; a route that asks to hold with a limit
 * that cannot reserve a later slot stops start-up, naming route, property and what is allowed.
 */
class MaxDelayStartupTests {

	private static final String ROUTE = "spring.cloud.gateway.server.webflux.routes[0].";

	private static ConfigurableApplicationContext start(String... properties) {
		RedisTestServer redis = RedisTestServer.get();
		return new SpringApplicationBuilder(GatewayTestApplication.class)
			.properties("server.port=0", "spring.data.redis.host=" + redis.host(),
					"spring.data.redis.port=" + redis.port())
			.properties(properties)
			.run();
	}

	@Test
	void theExampleStartsWithItsRouteHoldingUpToTwoSeconds() {
		try (ConfigurableApplicationContext context = start(
				"spring.config.additional-location=file:../config/gateway-max-delay.yml")) {
			CompiledRoute imports = context.getBean(PolicyRegistry.class).route("imports");
			assertThat(imports.policy.maxDelay()).isEqualTo(Duration.ofSeconds(2));
			assertThat(imports.byDefault.arguments.values()).endsWith("2000", "2000");
		}
	}

	@Test
	void aSlidingLogThatWouldHoldStopsStartUp() {
		List<String> route = List.of(ROUTE + "id=search", ROUTE + "uri=http://127.0.0.1:9",
				ROUTE + "predicates[0]=Path=/search/**", ROUTE + "filters[0].name=RequestRateLimiter",
				ROUTE + "filters[0].args.key-resolver=#{@headerKeyResolver}",
				ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.algorithm=sliding-log",
				ROUTE + "filters[0].args.window-rate-limiter.limit=10",
				ROUTE + "filters[0].args.window-rate-limiter.window=1m",
				ROUTE + "filters[0].args.window-rate-limiter.max-delay=1s");
		// thrown as it is by the route check, before the context is up
		assertThatThrownBy(() -> start(route.toArray(String[]::new)).close())
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'search': window-rate-limiter.max-delay is '1s' with limit 'search' "
					+ "counted by sliding-log (ring); allowed: token-bucket or fixed-window limits only, which reserve a "
					+ "later slot exactly (a sliding log or counter cannot: see docs/max-delay.md); remove max-delay or "
					+ "count every limit with one of those");
	}

}
