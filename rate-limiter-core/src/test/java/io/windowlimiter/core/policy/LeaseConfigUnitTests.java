package io.windowlimiter.core.policy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code window-rate-limiter.lease}: read on routes, used by the policies whose limits a leased part counts
 * exactly, and refused where it cannot be exact, each mistake with route, property and what is allowed.
 */
class LeaseConfigUnitTests {

	private static Map<String, Object> route(String... args) {
		Map<String, Object> route = new LinkedHashMap<>();
		for (String arg : args) {
			String[] pair = arg.split("=", 2);
			route.put("window-rate-limiter." + pair[0], pair[1]);
		}
		return route;
	}

	private static CompiledRoute compile(PolicyRegistry registry, String routeId, Map<String, Object> args) {
		registry.put(routeId, args);
		return registry.route(routeId);
	}

	@Test
	void fixedWindowsCalendarQuotasAndTokenBucketsLease() {
		RoutePolicy policy = RouteArgs.parse("chat", route("limits[0].algorithm=token-bucket", "limits[0].limit=10",
				"limits[0].window=1s", "limits[1].algorithm=fixed-window", "limits[1].limit=100", "limits[1].window=1m",
				"limits[2].limit=10000", "limits[2].calendar=day", "lease=50ms"));
		assertThat(policy.lease()).isEqualTo(Duration.ofMillis(50));
		assertThat(policy.leases()).isTrue();
		assertThat(compile(new PolicyRegistry(Map.of()), "chat", route("algorithm=fixed-window", "limit=5",
				"window=1s", "lease=1s")).byDefault.leases).isTrue();
		assertThat(RouteArgs.parse("chat", route("algorithm=fixed-window", "limit=5", "window=1s", "lease=0")).leases())
			.isFalse();
		assertThat(compile(new PolicyRegistry(Map.of()), "plain", route("algorithm=fixed-window", "limit=5",
				"window=1s")).byDefault.leases).isFalse();
	}

	@Test
	void aLeaseIsAWholeDurationOfAtMostASecondWithItsUnit() {
		for (String bad : new String[] { "2s", "0.5ms", "-1ms", "1001ms", "soon", "" }) {
			assertThatThrownBy(() -> RouteArgs.parse("chat", route("algorithm=fixed-window", "limit=5", "window=1s",
					"lease=" + bad)))
				.as(bad)
				.isInstanceOf(InvalidRouteConfigurationException.class)
				.hasMessage("Invalid rate limit on route 'chat': window-rate-limiter.lease is '" + bad + "'; allowed: a "
						+ "duration of whole milliseconds from 1ms to 1s, such as 20ms or 50ms (absent or 0: no leases)");
		}
		assertThatThrownBy(() -> RouteArgs.parse("chat", route("algorithm=fixed-window", "limit=5", "window=1s",
				"lease=50")))
			.hasMessage("Invalid rate limit on route 'chat': window-rate-limiter.lease is '50', a number without a unit; "
					+ "allowed: a duration with its unit: did you mean 50ms? (a duration of whole milliseconds from 1ms to "
					+ "1s, such as 20ms or 50ms (absent or 0: no leases))");
	}

	@Test
	void slidingAlgorithmsAndConcurrencyAreRefusedNamingTheLimit() {
		assertThatThrownBy(() -> RouteArgs.parse("search", route("limit=5", "window=1s", "lease=50ms")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'search': window-rate-limiter.lease is '50ms' with limit 'search' "
					+ "counted by sliding-window-counter; allowed: fixed-window (calendar quotas included) or token-bucket "
					+ "limits only, which a leased part counts exactly (a sliding log or counter weighs each request by when "
					+ "it came, which a part reserved ahead cannot: see docs/hot-clients.md); remove lease or count every "
					+ "limit with one of those");
		assertThatThrownBy(() -> RouteArgs.parse("search", route("limits[0].algorithm=fixed-window", "limits[0].limit=5",
				"limits[0].window=1s", "limits[1].algorithm=sliding-log", "limits[1].limit=50", "limits[1].window=1m",
				"limits[1].name=minute", "lease=20ms")))
			.hasMessageContaining("window-rate-limiter.lease is '20ms' with limit 'minute' counted by sliding-log");
		assertThatThrownBy(() -> RouteArgs.parse("calls", route("algorithm=concurrency", "limit=5", "window=1m",
				"lease=20ms")))
			.hasMessageContaining("window-rate-limiter.lease is '20ms' with limit 'calls' counted by concurrency");
	}

	@Test
	void aPenaltyAShadowRouteAMaxDelayAndLlmMeteringAreRefused() {
		assertThatThrownBy(() -> RouteArgs.parse("login", route("algorithm=fixed-window", "limit=5", "window=1m",
				"block-for=15m", "lease=50ms")))
			.hasMessageContaining("window-rate-limiter.lease is '50ms' with limit 'login' which has a block-for");
		assertThatThrownBy(() -> RouteArgs.parse("trial", route("algorithm=fixed-window", "limit=5", "window=1m",
				"shadow=true", "lease=50ms")))
			.hasMessageContaining("window-rate-limiter.lease is '50ms' on a shadow route; allowed: no lease with shadow");
		assertThatThrownBy(() -> RouteArgs.parse("held", route("algorithm=token-bucket", "limit=5", "window=1s",
				"max-delay=2s", "lease=50ms")))
			.hasMessageContaining("window-rate-limiter.lease is '50ms' beside max-delay '2s'");
		assertThatThrownBy(() -> new PolicyRegistry(Map.of()).put("llm", route("algorithm=fixed-window", "limit=5",
				"window=1m", "lease=50ms"), SlotRelease.ALWAYS, true))
			.hasMessageContaining("route 'llm': window-rate-limiter.lease is '50ms' on a route metering LLM calls");
	}

	@Test
	void everyPlanOfALeasingRouteMustBeCountedExactly() {
		Map<String, Map<String, String>> plans = new LinkedHashMap<>();
		plans.put("free", Map.of("limits[0].limit", "10", "limits[0].window", "1s", "limits[0].algorithm",
				"sliding-log"));
		plans.put("pro", Map.of("limits[0].limit", "100", "limits[0].window", "1s", "limits[0].algorithm",
				"token-bucket"));
		assertThatThrownBy(() -> new PolicyRegistry(plans).put("api", route("plan=pro", "lease=50ms")))
			.hasMessageContaining("route 'api': window-rate-limiter.lease is '50ms' with limit 'free-0' of plan 'free' "
					+ "counted by sliding-log");
		plans.remove("free");
		CompiledRoute route = compile(new PolicyRegistry(plans), "api", route("plan=pro", "lease=50ms"));
		assertThat(route.plan("pro").leases).isTrue();
	}

}
