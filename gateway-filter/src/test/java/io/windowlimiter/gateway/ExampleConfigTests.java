package io.windowlimiter.gateway;

import java.util.List;

import io.windowlimiter.gateway.plan.PlanResolver;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteLimit;

/** The example configurations in config/ start a gateway with all their routes. */
class ExampleConfigTests {

	private static ConfigurableApplicationContext start(String file) {
		RedisTestServer redis = RedisTestServer.get();
		return new SpringApplicationBuilder(GatewayTestApplication.class)
			.properties("spring.config.additional-location=file:../config/" + file, "server.port=0",
					"spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
			.run();
	}

	private static List<String> routeIds(ConfigurableApplicationContext context) {
		return context.getBean(RouteLocator.class).getRoutes().map(Route::getId).collectList().block();
	}

	@Test
	void theExampleGatewayConfigStarts() {
		try (ConfigurableApplicationContext context = start("gateway-example.yml")) {
			assertThat(routeIds(context)).containsExactlyInAnyOrder("orders", "login", "reports");
			WindowRateLimiter limiter = context.getBean(WindowRateLimiter.class);
			assertThat(WindowRateLimiter.policyFor("login", limiter.getConfig().get("login").getArgs()).first().blockFor())
				.isEqualTo(java.time.Duration.ofMinutes(15));
		}
	}

	@Test
	void theOperationsExampleStartsWithItsLimitsCostAndShadowMode() {
		try (ConfigurableApplicationContext context = start("gateway-operations.yml")) {
			assertThat(routeIds(context)).containsExactlyInAnyOrder("search", "exports", "catalog");
			WindowRateLimiter limiter = context.getBean(WindowRateLimiter.class);
			assertThat(WindowRateLimiter.policyFor("search", limiter.getConfig().get("search").getArgs()).limits())
				.extracting(RouteLimit::name)
				.containsExactly("per-second", "per-hour");
			assertThat(WindowRateLimiter.policyFor("exports", limiter.getConfig().get("exports").getArgs()).cost())
				.isEqualTo(5);
			assertThat(WindowRateLimiter.policyFor("catalog", limiter.getConfig().get("catalog").getArgs()).shadow())
				.isTrue();
			assertThat(context.getBeansOfType(ProblemDetailsFilter.class)).hasSize(1);
		}
	}

	@Test
	void thePlansExampleStartsWithFreeAndProPlansBurstsPerRouteAndADailyScope() {
		try (ConfigurableApplicationContext context = start("gateway-plans.yml")) {
			assertThat(routeIds(context)).containsExactlyInAnyOrder("orders", "search", "exports");
			PolicyRegistry registry = context.getBean(PolicyRegistry.class);
			assertThat(registry.plans()).containsExactly("enterprise", "free", "pro");
			// a monthly quota in Berlin's calendar, refused with 403 on orders
			assertThat(registry.planLimits().get("enterprise").get(1).policy().calendar())
				.hasToString("month in Europe/Berlin");
			assertThat(registry.route("orders").policy.quotaStatus()).isEqualTo(403);
			CompiledRoute orders = registry.route("orders");
			assertThat(orders.byDefault.reported.policyHeader())
				.isEqualTo("\"burst\";q=10;w=2, \"daily\";q=1000;w=86400");
			assertThat(orders.plan("pro").reported.policyHeader())
				.isEqualTo("\"burst\";q=100;w=2, \"daily\";q=100000;w=86400");
			// the burst is the route's own, the daily quota the scope's, on one hash tag
			assertThat(orders.byDefault.keysFor("alice")).containsExactly("wrl:{alice}:orders:tb",
					"wrl:{alice}:scope:api:fl");
			assertThat(registry.route("search").byDefault.keysFor("alice")).containsExactly("wrl:{alice}:search:tb",
					"wrl:{alice}:scope:api:fl");
			assertThat(registry.route("exports").policy.cost()).isEqualTo(5);
			// the plan is the principal's (Spring Security is on the test class path), never a header a client sent
			PlanResolver resolver = context.getBean(PlanResolver.class);
			assertThat(resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest.get("/orders").header("X-Plan", "pro")))
				.block()).isNull();
		}
	}

	@Test
	void theWindowRateLimitExampleStartsWithALoginFormATwoKeyRouteABatchRouteAndAnLlmRoute() {
		try (ConfigurableApplicationContext context = start("gateway-window-rate-limit.yml")) {
			assertThat(routeIds(context)).containsExactlyInAnyOrder("login", "orders", "batch", "chat");
			PolicyRegistry registry = context.getBean(PolicyRegistry.class);
			assertThat(registry.policies()).containsKeys("login", "orders", "orders@ip", "batch");
			assertThat(registry.route("orders@ip").byDefault.reported.policyHeader()).isEqualTo("\"orders@ip\";q=300;w=60");
			assertThat(registry.route("batch").byDefault.reported.policyHeader())
				.isEqualTo("\"burst\";q=50;w=10, \"hourly\";q=1000;w=3600");
			assertThat(registry.route("chat").byDefault.policies).extracting(policy -> policy.algorithm().id())
				.containsExactly("sliding-window-counter", "sliding-window-counter", "concurrency");
		}
	}

}
