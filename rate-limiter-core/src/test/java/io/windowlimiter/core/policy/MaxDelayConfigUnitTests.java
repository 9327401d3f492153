package io.windowlimiter.core.policy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code window-rate-limiter.max-delay}: read on routes, used with the plans and overrides that decide them,
 * and refused where a later slot cannot be reserved exactly, each mistake with route, property and what is
 * allowed.
 */
class MaxDelayConfigUnitTests {

	private static Map<String, Object> route(String... args) {
		Map<String, Object> route = new LinkedHashMap<>();
		for (String arg : args) {
			String[] pair = arg.split("=", 2);
			route.put("window-rate-limiter." + pair[0], pair[1]);
		}
		return route;
	}

	private static Map<String, Map<String, String>> plans(String freeAlgorithm) {
		Map<String, Map<String, String>> plans = new LinkedHashMap<>();
		plans.put("free", Map.of("limits[0].limit", "10", "limits[0].window", "1s", "limits[0].algorithm",
				freeAlgorithm));
		plans.put("pro", Map.of("limits[0].limit", "100", "limits[0].window", "1s", "limits[0].algorithm",
				"token-bucket", "limits[0].burst", "200"));
		return plans;
	}

	@Test
	void aRouteHoldsUpToItsMaxDelayWithTokenBucketAndFixedWindowLimits() {
		RoutePolicy policy = RouteArgs.parse("orders", route("limits[0].algorithm=token-bucket", "limits[0].limit=10",
				"limits[0].window=1s", "limits[1].algorithm=fixed-window", "limits[1].limit=100", "limits[1].window=1m",
				"max-delay=2s"));
		assertThat(policy.maxDelay()).isEqualTo(Duration.ofSeconds(2));
		assertThat(policy.holds()).isTrue();
		assertThat(RouteArgs.parse("orders", route("algorithm=fixed-window", "limit=5", "window=1s", "max-delay=0"))
			.holds()).isFalse();
		assertThat(RouteArgs.parse("orders", route("limit=5", "window=1s")).maxDelay()).isZero();
		CompiledRoute compiled = compile(new PolicyRegistry(Map.of()), "orders",
				route("algorithm=token-bucket", "limit=5", "window=1s", "max-delay=500ms"));
		assertThat(compiled.byDefault.arguments.values()).endsWith("500", "500");
		assertThat(compiled.byDefault.arguments.withoutHold().values()).endsWith("500", "0");
		assertThat(compiled.byDefault.arguments.withCost(3).values()).endsWith("500", "500");
	}

	@Test
	void calendarQuotasAndPenaltiesAreRefusedWithAMaxDelay() {
		// their parts of the script reserve no later slot, and a held reply and a penalty's cannot be told apart
		assertThatThrownBy(() -> RouteArgs.parse("quota", route("limit=5", "calendar=day", "max-delay=2s")))
			.hasMessageContaining("window-rate-limiter.max-delay is '2s' with limit 'quota' which is a calendar quota");
		assertThatThrownBy(() -> RouteArgs.parse("login", route("algorithm=fixed-window", "limit=5", "window=1m",
				"block-for=15m", "max-delay=2s")))
			.hasMessageContaining("window-rate-limiter.max-delay is '2s' with limit 'login' which has a block-for");
	}

	@Test
	void slidingAlgorithmsAreRefusedNamingTheRouteThePropertyAndTheLimit() {
		assertThatThrownBy(() -> RouteArgs.parse("search", route("limit=5", "window=1s", "max-delay=2s")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'search': window-rate-limiter.max-delay is '2s' with limit 'search' "
					+ "counted by sliding-window-counter; allowed: token-bucket or fixed-window limits only, which reserve "
					+ "a later slot exactly (a sliding log or counter cannot: see docs/max-delay.md); remove max-delay or "
					+ "count every limit with one of those");
		assertThatThrownBy(() -> RouteArgs.parse("search", route("limits[0].algorithm=fixed-window", "limits[0].limit=5",
				"limits[0].window=1s", "limits[1].algorithm=sliding-log", "limits[1].log-storage=sorted-set",
				"limits[1].limit=50", "limits[1].window=1m", "limits[1].name=minute", "max-delay=500ms")))
			.hasMessageContaining("window-rate-limiter.max-delay is '500ms' with limit 'minute' counted by sliding-log "
					+ "(sorted-set)");
	}

	@Test
	void badDurationsAndShadowRoutesAreRefused() {
		assertThatThrownBy(() -> RouteArgs.parse("r", route("algorithm=fixed-window", "limit=5", "window=1s",
				"max-delay=2")))
			.hasMessage("Invalid rate limit on route 'r': window-rate-limiter.max-delay is '2', a number without a unit, "
					+ "which would mean 2 ms; allowed: a duration with its unit: did you mean 2s? (or 2ms; a duration of "
					+ "whole milliseconds from 0 (none) to 1m, such as 500ms, 2s or 30s)");
		for (String bad : List.of("2m", "-1s", "soon", "1.5ms")) {
			assertThatThrownBy(() -> RouteArgs.parse("r", route("algorithm=fixed-window", "limit=5", "window=1s",
					"max-delay=" + bad)))
				.hasMessage("Invalid rate limit on route 'r': window-rate-limiter.max-delay is '" + bad + "'; allowed: "
						+ "a duration of whole milliseconds from 0 (none) to 1m, such as 500ms, 2s or 30s");
		}
		assertThatThrownBy(() -> RouteArgs.parse("r", route("algorithm=fixed-window", "limit=5", "window=1s",
				"max-delay=1s", "shadow=true")))
			.hasMessage("Invalid rate limit on route 'r': window-rate-limiter.max-delay is '1s' on a shadow route; "
					+ "allowed: no max-delay with shadow: true (a shadow route never refuses, so it has nothing to hold)");
		assertThatThrownBy(() -> RouteArgs.parse("r", route("algorithm=fixed-window", "limit=5", "window=1s",
				"max-dealy=1s")))
			.hasMessageContaining("max-dealy is not a known property")
			.hasMessageContaining("deny, max-delay, lease, credential-keys (each prefixed");
	}

	@Test
	void everyPlanOfARouteThatHoldsMustReserveExactly() {
		PolicyRegistry registry = new PolicyRegistry(plans("fixed-window"));
		CompiledRoute orders = compile(registry, "orders", route("plan=free", "max-delay=1s"));
		assertThat(orders.plan("pro").arguments.values()).endsWith("1000", "1000");
		assertThat(orders.byDefault.arguments.values()).endsWith("1000", "1000");

		assertThatThrownBy(() -> new PolicyRegistry(plans("sliding-log")).put("orders", route("plan=pro", "max-delay=1s")))
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.max-delay is '1s' with limit 'free-0' "
					+ "of plan 'free' counted by sliding-log (ring); allowed: token-bucket or fixed-window limits only, "
					+ "which reserve a later slot exactly (a sliding log or counter cannot: see docs/max-delay.md); "
					+ "remove max-delay or count every limit with one of those");
	}

	@Test
	void anOverrideThatCannotReserveIsRefusedAndOneReadBackIsIgnored() {
		PolicyRegistry registry = new PolicyRegistry(Map.of());
		CompiledRoute orders = compile(registry, "orders",
				route("algorithm=token-bucket", "limit=5", "window=1s", "max-delay=2s"));
		List<RouteLimit> log = PolicyRegistry.overrideLimits("orders",
				List.of(Map.of("limit", "50", "window", "1m", "algorithm", "sliding-log")));
		assertThatThrownBy(() -> MaxDelay.checkOverride("orders", "orders", orders.policy, log))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on override for 'orders': limits[0].algorithm is 'sliding-log (ring)' on "
					+ "route 'orders', which holds requests up to window-rate-limiter.max-delay 2s; allowed: "
					+ "token-bucket or fixed-window limits only, which reserve a later slot exactly (a sliding log or "
					+ "counter cannot: see docs/max-delay.md); remove max-delay or count every limit with one of those");
		assertThat(registry.override("orders", orders, log)).as("falls back to the route's own").isNull();
		List<RouteLimit> window = PolicyRegistry.overrideLimits("orders",
				List.of(Map.of("limit", "50", "window", "1m", "algorithm", "fixed-window")));
		MaxDelay.checkOverride("orders", "orders", orders.policy, window);
		assertThat(registry.override("orders", orders, window).arguments.values()).endsWith("2000", "2000");
	}

	@Test
	void routesNamingAScopeMustHoldAlike() {
		PolicyRegistry registry = new PolicyRegistry(Map.of());
		registry.put("orders", route("algorithm=fixed-window", "limit=5", "window=1s", "scope=api", "max-delay=1s"));
		registry.put("search", route("algorithm=fixed-window", "limit=5", "window=1s", "scope=api", "max-delay=1s"));
		registry.put("other", route("algorithm=fixed-window", "limit=5", "window=1s", "max-delay=2s"));
		assertThatThrownBy(() -> registry.put("admin", route("algorithm=fixed-window", "limit=5", "window=1s",
				"scope=api")))
			.hasMessageStartingWith("Invalid rate limit on route 'admin': window-rate-limiter.max-delay is '0s' but '1s' "
					+ "on route '")
			.hasMessageEndingWith("', which names scope 'api' too; allowed: the same max-delay on every route naming "
					+ "a scope: its counters hold the slots each reserves");
	}

	@Test
	void startUpChecksEveryRouteTogether() {
		// what StartupRouteCheck runs on the gateway's routes before it serves
		Map<String, Map<String, Object>> routes = new LinkedHashMap<>();
		routes.put("imports", route("algorithm=token-bucket", "limit=10", "window=1s", "burst=20", "max-delay=2s"));
		new PolicyRegistry(Map.of()).check(routes);
		routes.put("search", route("algorithm=sliding-log", "limit=10", "window=1m", "max-delay=1s"));
		assertThatThrownBy(() -> new PolicyRegistry(Map.of()).check(routes))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'search': window-rate-limiter.max-delay is '1s' with limit 'search' "
					+ "counted by sliding-log (ring); allowed: token-bucket or fixed-window limits only, which reserve a "
					+ "later slot exactly (a sliding log or counter cannot: see docs/max-delay.md); remove max-delay or "
					+ "count every limit with one of those");
	}

	private static CompiledRoute compile(PolicyRegistry registry, String routeId, Map<String, Object> args) {
		registry.put(routeId, args);
		return registry.route(routeId);
	}

}
