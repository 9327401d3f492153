package io.windowlimiter.gateway;

import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** A bad limit in the gateway's route properties stops start-up with a message that says what to fix. */
class StartupCheckTests {

	private static final String ROUTE = "spring.cloud.gateway.server.webflux.routes[0].";

	private static ConfigurableApplicationContext start(String... filterArgs) {
		RedisTestServer redis = RedisTestServer.get();
		List<String> properties = new ArrayList<>(List.of("server.port=0",
				"spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
				ROUTE + "id=orders", ROUTE + "uri=http://127.0.0.1:9", ROUTE + "predicates[0]=Path=/orders/**",
				ROUTE + "filters[0].name=RequestRateLimiter",
				ROUTE + "filters[0].args.key-resolver=#{@headerKeyResolver}"));
		for (String arg : filterArgs) {
			properties.add(ROUTE + "filters[0].args." + arg);
		}
		return new SpringApplicationBuilder(GatewayTestApplication.class).properties(properties.toArray(String[]::new))
			.run();
	}

	/** Why start-up failed: the innermost cause. */
	private static Throwable startUpFailure(String... filterArgs) {
		Throwable thrown = catchThrowable(() -> start(filterArgs));
		assertThat(thrown).as("start-up must fail").isNotNull();
		return NestedExceptionUtils.getMostSpecificCause(thrown);
	}

	@Test
	void anUnknownAlgorithmStopsStartUp() {
		assertThat(startUpFailure("window-rate-limiter.algorithm=leaky-bucket", "window-rate-limiter.limit=10",
				"window-rate-limiter.window=1m"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.algorithm is 'leaky-bucket'; "
					+ "allowed: one of fixed-window, sliding-log, sliding-window-counter, token-bucket");
	}

	@Test
	void aZeroLimitStopsStartUp() {
		assertThat(startUpFailure("rate-limiter=#{@windowRateLimiter}", "window-rate-limiter.limit=0",
				"window-rate-limiter.window=1m"))
			.hasMessageContaining("route 'orders'")
			.hasMessageContaining("window-rate-limiter.limit is '0'");
	}

	@Test
	void theWindowLimiterIsTheDefaultSoARouteWithoutItsArgumentsStopsStartUp() {
		assertThat(startUpFailure()).hasMessageContaining("window-rate-limiter.limit is missing");
	}

	@Test
	void routesOfTheBuiltInLimiterAreLeftAlone() {
		try (ConfigurableApplicationContext context = start("rate-limiter=#{@redisRateLimiter}",
				"redis-rate-limiter.replenish-rate=10")) {
			assertThat(context.isActive()).isTrue();
		}
	}

	@Test
	void aGoodRouteStarts() {
		try (ConfigurableApplicationContext context = start("window-rate-limiter.algorithm=sliding-log",
				"window-rate-limiter.limit=10", "window-rate-limiter.window=1m")) {
			assertThat(context.getBean(WindowRateLimiter.class)).isNotNull();
		}
	}

}
