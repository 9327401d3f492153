package io.windowlimiter.core.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import io.windowlimiter.core.policy.RouteArgs;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A plan's limits are bound from the properties with every property a route's limit has: Boot drops a property
 * the bound class lacks without a word, so a missing one (as {@code unit} was, issue 44) silently changes the plan.
 */
class PlanPropertiesUnitTests {

	@Test
	void everyPropertyOfARouteLimitReachesThePlan() {
		Map<String, String> properties = new LinkedHashMap<>();
		for (String property : RouteArgs.limitProperties()) {
			properties.put("window-rate-limiter.plans.free.limits[0]." + property, "value-of-" + property);
		}
		WindowRateLimiterProperties bound = new Binder(new MapConfigurationPropertySource(properties))
			.bind(WindowRateLimiterProperties.PREFIX, Bindable.of(WindowRateLimiterProperties.class))
			.get();
		Map<String, String> expected = new LinkedHashMap<>();
		RouteArgs.limitProperties().forEach(property -> expected.put("limits[0]." + property, "value-of-" + property));
		assertThat(bound.planArguments().get("free")).containsExactlyInAnyOrderEntriesOf(expected);
	}

	/** The docs' own example, camelCase as a properties file may write it too. */
	@Test
	void aTokenLimitOfAPlanKeepsItsUnitWrittenEitherWay() {
		Map<String, String> properties = Map.of("window-rate-limiter.plans.free.limits[0].limit", "100000",
				"window-rate-limiter.plans.free.limits[0].window", "1d", "window-rate-limiter.plans.free.limits[0].unit",
				"tokens", "window-rate-limiter.plans.free.limits[0].timeZone", "Europe/Berlin");
		WindowRateLimiterProperties bound = new Binder(new MapConfigurationPropertySource(properties))
			.bind(WindowRateLimiterProperties.PREFIX, Bindable.of(WindowRateLimiterProperties.class))
			.get();
		assertThat(bound.planArguments().get("free")).containsEntry("limits[0].unit", "tokens")
			.containsEntry("limits[0].time-zone", "Europe/Berlin");
	}

}
