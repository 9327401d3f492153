package io.windowlimiter.core.policy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Plans, scopes and overrides compiled once, and every mistake refused with route or plan, property and what is allowed. */
class PolicyRegistryUnitTests {

	// compiling needs only each algorithm's key suffix and arguments, never Redis
	private static Map<String, Map<String, String>> plans() {
		Map<String, Map<String, String>> plans = new LinkedHashMap<>();
		plans.put("free", Map.of("limits[0].limit", "10", "limits[0].window", "1s", "limits[0].name", "per-second",
				"limits[1].limit", "1000", "limits[1].window", "1d", "limits[1].algorithm", "fixed-window",
				"limits[1].scope", "api"));
		plans.put("pro", Map.of("limits[0].limit", "100", "limits[0].window", "1s", "limits[0].algorithm",
				"token-bucket", "limits[0].burst", "200", "limits[1].limit", "100000", "limits[1].window", "1d",
				"limits[1].algorithm", "fixed-window", "limits[1].scope", "api"));
		return plans;
	}

	private static PolicyRegistry registry() {
		return new PolicyRegistry(plans());
	}

	private static Map<String, Object> route(String... args) {
		Map<String, Object> route = new LinkedHashMap<>();
		route.put("rate-limiter", "#{@windowRateLimiter}");
		for (String arg : args) {
			String[] pair = arg.split("=", 2);
			route.put("window-rate-limiter." + pair[0], pair[1]);
		}
		return route;
	}

	@Test
	void aRouteOnAPlanGetsEveryPlanCompiledWithItsOwnAndItsScopesKeysOnOneHashTag() {
		PolicyRegistry registry = registry();
		registry.put("orders", route("plan=free"));
		CompiledRoute orders = registry.route("orders");
		assertThat(orders.byDefault.plan).isEqualTo("free");
		assertThat(orders.scopes).containsExactly("api");
		assertThat(orders.byDefault.keysFor("alice")).containsExactly("wrl:{alice}:orders:c",
				"wrl:{alice}:scope:api:fl");
		assertThat(orders.plan("pro").keysFor("alice")).containsExactly("wrl:{alice}:orders:tb",
				"wrl:{alice}:scope:api:fl");
		assertThat(orders.byDefault.reported.policyHeader())
			.isEqualTo("\"per-second\";q=10;w=1, \"api\";q=1000;w=86400");
		assertThat(orders.plan("pro").reported.policyHeader())
			.isEqualTo("\"pro-0\";q=200;w=2, \"api\";q=100000;w=86400");
		assertThat(orders.plan("gold")).isNull();
	}

	@Test
	void aFiltersOwnPolicyStaysWithItsRouteAndGoesWithIt() {
		PolicyRegistry registry = registry();
		registry.put("orders", route("limit=4", "window=1m"));
		registry.put("orders@ip", route("limit=8", "window=1m"));
		registry.put("login@ip", route("limit=8", "window=1m"));
		assertThat(registry.retain(java.util.Set.of("orders"))).containsExactly("login@ip");
		assertThat(registry.policies()).containsOnlyKeys("orders", "orders@ip");
		assertThat(registry.retain(java.util.Set.of())).containsExactly("orders", "orders@ip");
	}

	@Test
	void aRoutesScopeIsTheScopeOfEveryLimitThatNamesNone() {
		PolicyRegistry registry = registry();
		registry.put("a", route("scope=shared", "limit=4", "window=1m"));
		registry.put("b", route("scope=shared", "limit=4", "window=1m"));
		assertThat(registry.route("a").byDefault.keysFor("c")).containsExactly("wrl:{c}:scope:shared:c");
		assertThat(registry.route("b").byDefault.keysFor("c")).isEqualTo(registry.route("a").byDefault.keysFor("c"));
		// clients see the scope's name
		assertThat(registry.route("a").byDefault.reported.policyHeader()).isEqualTo("\"shared\";q=4;w=60");
		registry.put("c", route("limits[0].limit=2", "limits[0].window=1s", "limits[1].scope=shared",
				"limits[1].limit=4", "limits[1].window=1m"));
		assertThat(registry.route("c").byDefault.keysFor("k")).containsExactly("wrl:{k}:c:c",
				"wrl:{k}:scope:shared:c");
	}

	@Test
	void aScopeWithOtherLimitsOnAnotherRouteIsRefusedNamingBothRoutes() {
		PolicyRegistry registry = registry();
		Map<String, Map<String, Object>> routes = new LinkedHashMap<>();
		routes.put("a", route("scope=shared", "limit=4", "window=1m"));
		routes.put("b", route("scope=shared", "limit=5", "window=1m"));
		assertThatThrownBy(() -> registry.check(routes))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("window-rate-limiter.scope 'shared' is ['shared' 5 per 1m sliding-window-counter] "
					+ "here but ['shared' 4 per 1m sliding-window-counter] on route 'a' for clients without a plan")
			.hasMessageContaining("on route 'b'")
			.hasMessageContaining("allowed: the same limits wherever a scope is named");
	}

	@Test
	void aRouteWithLimitsOfItsOwnCannotShareAScopeThatPlansSetOtherwise() {
		PolicyRegistry registry = registry();
		registry.put("orders", route("plan=free"));
		assertThatThrownBy(() -> registry.put("legacy",
				route("limits[0].scope=api", "limits[0].limit=1000", "limits[0].window=1d",
						"limits[0].algorithm=fixed-window")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("Invalid rate limit on route 'legacy'")
			.hasMessageContaining("on route 'orders' for clients on plan 'pro'");
		// the refused route is not kept
		assertThat(registry.route("legacy")).isNull();
	}

	@Test
	void routesWithDifferentDefaultPlansCannotShareAScope() {
		PolicyRegistry registry = registry();
		registry.put("orders", route("plan=free"));
		assertThatThrownBy(() -> registry.put("premium", route("plan=pro")))
			.hasMessageContaining("for clients without a plan");
	}

	@Test
	void aBadPlanIsRefusedNamingPlanAndProperty() {
		Map<String, Map<String, String>> plans = Map.of("free",
				Map.of("limits[0].limit", "10", "limits[0].window", "soon"));
		assertThatThrownBy(() -> new PolicyRegistry(plans))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on plan 'free': window-rate-limiter.plans.free.limits[0].window is 'soon'; "
					+ "allowed: a duration of whole milliseconds from 1ms to 366d, such as 500ms, 10s, 1m, 1h or 1d");
		assertThatThrownBy(() -> new PolicyRegistry(Map.of("pro", Map.of("limits[0].limit", "10",
				"limits[0].window", "1s", "limits[0].burst", "20"))))
			.hasMessage("Invalid rate limit on plan 'pro': window-rate-limiter.plans.pro.limits[0].burst is '20'; "
					+ "allowed: only with token-bucket, not sliding-window-counter");
		assertThatThrownBy(() -> new PolicyRegistry(Map.of("empty", Map.of())))
			.hasMessageContaining("window-rate-limiter.plans.empty.limits is missing");
		assertThatThrownBy(() -> new PolicyRegistry(Map.of("typo", Map.of("limits[0].limt", "1"))))
			.hasMessageContaining("window-rate-limiter.plans.typo.limits[0].limt is not a known property");
	}

	@Test
	void aRouteNamingAPlanAndLimitsOfItsOwnIsRefused() {
		assertThatThrownBy(() -> registry().put("orders", route("plan=free", "limit=5", "window=1m")))
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.limit is set beside "
					+ "window-rate-limiter.plan; allowed: either a plan (which gives the limits) or limits of the "
					+ "route's own, not both");
		assertThatThrownBy(() -> registry().put("orders", route("plan=free", "limits[0].limit=5")))
			.hasMessageContaining("window-rate-limiter.limits[...] is set beside window-rate-limiter.plan");
	}

	@Test
	void aRouteNamingAnUndeclaredPlanIsRefusedListingTheDeclaredOnes() {
		assertThatThrownBy(() -> registry().put("orders", route("plan=gold")))
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.plan is 'gold'; allowed: one of "
					+ "free, pro (declared under window-rate-limiter.plans)");
	}

	@Test
	void aCostAbovePlanLimitIsRefused() {
		assertThatThrownBy(() -> registry().put("orders", route("plan=free", "cost=20")))
			.hasMessageContaining("window-rate-limiter.cost is '20', more than limit 'per-second' of plan 'free' allows");
	}

	@Test
	void overridesAreCheckedByTheRulesOfARoutesLimits() {
		assertThat(PolicyRegistry.overrideLimits("orders", List.of(Map.of("limit", 5, "window", "1m"))))
			.extracting(RouteLimit::name)
			.containsExactly("orders-0");
		assertThatThrownBy(() -> PolicyRegistry.overrideLimits("orders", List.of(Map.of("limit", 0, "window", "1m"))))
			.hasMessage("Invalid rate limit on override for 'orders': limits[0].limit is '0'; allowed: a whole number "
					+ "from 1 to 1000000000");
		assertThatThrownBy(() -> PolicyRegistry.overrideLimits("orders", List.of()))
			.hasMessageContaining("limits is missing");
	}

	@Test
	void anOverrideOnARouteWithAScopeCountsIntoThatScope() {
		PolicyRegistry registry = registry();
		registry.put("a", route("scope=shared", "limit=4", "window=1m"));
		CompiledRoute a = registry.route("a");
		List<RouteLimit> limits = PolicyRegistry.overrideLimits("shared", List.of(Map.of("limit", 40, "window", "1m")));
		CompiledPolicy override = registry.override("a", a, limits);
		assertThat(override.keysFor("c")).containsExactly("wrl:{c}:scope:shared:c");
		assertThat(registry.override("a", a, limits)).as("compiled once").isSameAs(override);
	}

	@Test
	void anOverrideOfOneLimitGivenNoNameKeepsTheNameOfTheLimitItReplaces() {
		PolicyRegistry registry = registry();
		registry.put("orders", route("limit=4", "window=1m"));
		CompiledRoute orders = registry.route("orders");
		List<RouteLimit> limits = PolicyRegistry.overrideLimits("orders", List.of(Map.of("limit", 40, "window", "1m")));
		assertThat(registry.override("orders", orders, orders.byDefault, limits, true, java.util.Set.of()).reported.policyHeader())
			.isEqualTo("\"orders\";q=40;w=60");
		assertThat(registry.override("orders", orders, orders.byDefault, limits, false, java.util.Set.of()).reported.policyHeader()).as("named as given")
			.isEqualTo("\"orders-0\";q=40;w=60");
	}

	@Test
	void registeringTheSameRouteAgainIsNoChange() {
		PolicyRegistry registry = registry();
		assertThat(registry.put("orders", route("plan=free"))).isTrue();
		assertThat(registry.put("orders", route("plan=free"))).isFalse();
		assertThat(registry.put("orders", route("plan=pro"))).isTrue();
	}

}
