package io.windowlimiter.gateway.filter;

import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.CountStatuses;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.gateway.StartupRouteCheck;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A bad WindowRateLimit filter in the route properties stops start-up, naming route, argument and what is
 * allowed: the start-up check run on the gateway's route properties, as start-up runs it (without a context,
 * which costs seconds a case; StartupCheckTests shows the check stops a real start-up).
 */
class WindowRateLimitFilterStartupTests {

	/** Why start-up would fail with route 'orders' and these filters ({@code index.name=value} pairs). */
	private static Throwable startUpFailure(String... filterProperties) {
		RouteDefinition route = new RouteDefinition();
		route.setId("orders");
		route.setUri(URI.create("http://127.0.0.1:9"));
		List<FilterDefinition> filters = new ArrayList<>();
		for (String property : filterProperties) {
			int index = Integer.parseInt(property.substring(0, property.indexOf('.')));
			while (filters.size() <= index) {
				FilterDefinition filter = new FilterDefinition();
				filter.setName("WindowRateLimit");
				filters.add(filter);
			}
			String[] pair = property.substring(property.indexOf('.') + 1).split("=", 2);
			filters.get(index).getArgs().put(pair[0], pair[1]);
		}
		route.setFilters(filters);
		GatewayProperties gateway = new GatewayProperties();
		gateway.setRoutes(List.of(route));
		Throwable thrown = catchThrowable(
				() -> new StartupRouteCheck(gateway, new PolicyRegistry(Map.of()), false, null).afterSingletonsInstantiated());
		assertThat(thrown).as("start-up must fail").isNotNull();
		return thrown;
	}

	private static String[] filter(int index, String... args) {
		return Arrays.stream(args).map(arg -> index + "." + arg).toArray(String[]::new);
	}

	@Test
	void aBadLimitIsNamedAsTheFilterWritesIt() {
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "limit=abc", "window=1m")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'orders': limit is 'abc'; allowed: a whole number");
	}

	@Test
	void anUnknownArgumentStopsStartUp() {
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "limt=10", "window=1m")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'orders': limt is not an argument of WindowRateLimit; "
					+ "allowed: id, key-resolver, cost-resolver, cost-from-header, count-statuses");
	}

	@Test
	void twoFiltersWithoutIdsStopStartUp() {
		List<String> both = new ArrayList<>(List.of(filter(0, "key-resolver=#{@headerKeyResolver}", "limit=10",
				"window=1m")));
		both.addAll(List.of(filter(1, "key-resolver=#{@clientIpKeyResolver}", "limit=20", "window=1m")));
		assertThat(startUpFailure(both.toArray(String[]::new))).isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': id is not set on more than one of its limits' filters "
					+ "(WindowRateLimit); allowed: an id of its own for each WindowRateLimit filter of a route but one "
					+ "(default filters included), e.g. id: ip; the filter's limits are then known as orders@<id>");
	}

	@Test
	void badCountStatusesAndAMissingKeyResolverStopStartUp() {
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "id=ip", "limit=10", "window=1m",
				"count-statuses=401,4x")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders@ip': count-statuses is '401,4x', with '4x'; allowed: "
					+ CountStatuses.ALLOWED);
		assertThat(startUpFailure(filter(0, "limit=10", "window=1m"))).isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'orders': key-resolver is missing; allowed: ");
	}

	@Test
	void aLeaseIsCheckedAsOnRequestRateLimiterRoutesAndRefusedBesideACostTheResponseSettles() {
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "algorithm=sliding-log", "limit=10",
				"window=1m", "lease=50ms")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'orders': lease is '50ms' with limit 'orders' counted by "
					+ "sliding-log (ring); allowed: fixed-window (calendar quotas included) or token-bucket limits only");
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "algorithm=fixed-window", "limit=10",
				"window=1m", "lease=50ms", "count-statuses=5xx")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': lease is '50ms' beside count-statuses; allowed: either "
					+ "lease or a cost the response settles (count-statuses, cost-from-response-header): a request admitted "
					+ "from a leased part has no reservation of its own to settle");
		// no lease, however written, goes with anything
		for (String none : List.of("0", "0ms", "0s")) {
			FilterSettings.checkLeaseNotSettled("orders", none, "5xx", null);
		}
	}

	@Test
	void maxDelayIsCheckedAsOnRequestRateLimiterRoutes() {
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "algorithm=sliding-log", "limit=10",
				"window=1m", "max-delay=1s")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': max-delay is '1s' with limit 'orders' counted by "
					+ "sliding-log (ring); allowed: token-bucket or fixed-window limits only, which reserve a later slot "
					+ "exactly (a sliding log or counter cannot: see docs/max-delay.md); remove max-delay or count every "
					+ "limit with one of those");
		// the default algorithm, the sliding window counter, cannot hold either
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "limit=10", "window=1m",
				"max-delay=1s")))
			.hasMessageContaining("max-delay is '1s' with limit 'orders' counted by sliding-window-counter");
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "algorithm=token-bucket",
				"limit=10", "window=1s", "max-delay=2s", "shadow=true")))
			.hasMessage("Invalid rate limit on route 'orders': max-delay is '2s' on a shadow route; allowed: no "
					+ "max-delay with shadow: true (a shadow route never refuses, so it has nothing to hold)");
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "algorithm=fixed-window",
				"limit=10", "window=1s", "max-delay=2m")))
			.hasMessage("Invalid rate limit on route 'orders': max-delay is '2m'; allowed: a duration of whole "
					+ "milliseconds from 0 (none) to 1m, such as 500ms, 2s or 30s");
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "id=ip", "algorithm=fixed-window",
				"limit=10", "window=1s", "max-delay=2")))
			.hasMessageStartingWith("Invalid rate limit on route 'orders@ip': max-delay is '2', a number without a "
					+ "unit, which would mean 2 ms; allowed: a duration with its unit: did you mean 2s?");
	}

	@Test
	void maxDelayOnAnLlmFilterStopsStartUp() {
		assertThat(startUpFailure(filter(0, "key-resolver=#{@headerKeyResolver}", "llm=openai",
				"limits[0].algorithm=token-bucket", "limits[0].limit=100000", "limits[0].window=1m",
				"limits[0].unit=tokens", "max-delay=2s")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': max-delay is '2s' beside llm; allowed: no max-delay on "
					+ "an LLM filter (its calls are refused at once, with Retry-After); hold requests on a "
					+ "WindowRateLimit filter without llm");
	}

}
