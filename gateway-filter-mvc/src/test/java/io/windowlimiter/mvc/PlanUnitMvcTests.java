package io.windowlimiter.mvc;

import java.util.LinkedHashMap;
import java.util.Map;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.RouteArgs;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Plans declared in the properties on a Server MVC gateway keep each limit's {@code unit}, as on WebFlux (the core
 * binds both): a token limit counts tokens on an LLM route, a plan of token limits only is refused on a route that
 * meters no LLM calls, and an unknown unit stops start-up naming the plan's property (issue 44, attack r2 6).
 */
class PlanUnitMvcTests {

	/** Plan {@code free} as docs/llm-routes.md declares it, and plan {@code tokonly}: 3 tokens per 10 minutes. */
	private static Map<String, Object> plans(String freeTokenUnit, boolean tokonly) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("window-rate-limiter.plans.free.limits[0].limit", "60");
		properties.put("window-rate-limiter.plans.free.limits[0].window", "1m");
		properties.put("window-rate-limiter.plans.free.limits[1].limit", "100000");
		properties.put("window-rate-limiter.plans.free.limits[1].window", "1d");
		properties.put("window-rate-limiter.plans.free.limits[1].unit", freeTokenUnit);
		if (tokonly) {
			properties.put("window-rate-limiter.plans.tokonly.limits[0].limit", "3");
			properties.put("window-rate-limiter.plans.tokonly.limits[0].window", "10m");
			properties.put("window-rate-limiter.plans.tokonly.limits[0].unit", "tokens");
		}
		return properties;
	}

	private static ConfigurableApplicationContext start(Map<String, Object> properties) {
		RedisTestServer redis = RedisTestServer.get();
		Map<String, Object> all = new LinkedHashMap<>(properties);
		all.put("server.port", "0");
		all.put("spring.data.redis.host", redis.host());
		all.put("spring.data.redis.port", redis.port());
		all.put("test.downstream", "http://127.0.0.1:9");
		all.put("logging.level.org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter", "off");
		all.put("logging.level.org.springframework.boot.SpringApplication", "off");
		return new SpringApplicationBuilder(MvcTestApplication.class).properties(all).run();
	}

	private static Throwable startUpFailure(Map<String, Object> properties) {
		Throwable thrown = catchThrowable(() -> start(properties));
		assertThat(thrown).as("start-up must fail").isNotNull();
		return NestedExceptionUtils.getMostSpecificCause(thrown);
	}

	@Test
	void aPlansTokenLimitCountsTokensOnAnLlmRouteAndIsLeftOutOnAPlainOne() {
		Map<String, Object> properties = plans("tokens", false);
		properties.putAll(MvcTestRoutes.route(0, "chat", "http://127.0.0.1:9", "llm=openai", "plan=free"));
		properties.putAll(MvcTestRoutes.route(1, "search", "http://127.0.0.1:9", "plan=free"));
		try (ConfigurableApplicationContext context = start(properties)) {
			RateLimiterCore core = context.getBean(RateLimiterCore.class);
			assertThat(core.plans().get("free")).extracting(RouteLimit::countsTokens).containsExactly(false, true);
		}
	}

	@Test
	void aPlanOfTokenLimitsOnlyOnARouteWithoutLlmStopsStartUpNamingRouteAndPlan() {
		Map<String, Object> properties = plans("tokens", true);
		properties.putAll(MvcTestRoutes.route(0, "ptok", "http://127.0.0.1:9", "plan=tokonly"));
		assertThat(startUpFailure(properties)).isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("route 'ptok'")
			.hasMessageContaining("plan 'tokonly'")
			.hasMessageContaining("has only limits counting tokens, on a route that meters no LLM calls");
	}

	@Test
	void aPlansUnknownUnitStopsStartUpNamingPlanAndProperty() {
		Map<String, Object> properties = plans("token", false);
		properties.putAll(MvcTestRoutes.route(0, "search", "http://127.0.0.1:9", "plan=free"));
		assertThat(startUpFailure(properties)).isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on plan 'free': window-rate-limiter.plans.free.limits[1].unit is 'token'; "
					+ "allowed: " + RouteArgs.UNITS);
	}

}
