package io.windowlimiter.gateway;

import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;

/**
 * Checks the limiter arguments of every route in the gateway's properties while the application
 * starts, so a bad one stops start-up. The gateway itself builds routes later and only logs a route
 * that fails, which would leave the API unprotected or unrouted without anyone noticing.
 *
 * <p>Arguments given as SpEL ({@code #{...}}) are only known when routes are built; those routes are
 * checked then, by {@link WindowRateLimiter#onApplicationEvent}.
 */
public class StartupRouteCheck implements SmartInitializingSingleton {

	static final String FILTER_NAME = "RequestRateLimiter";

	private final GatewayProperties gatewayProperties;

	public StartupRouteCheck(GatewayProperties gatewayProperties) {
		this.gatewayProperties = gatewayProperties;
	}

	@Override
	public void afterSingletonsInstantiated() {
		check(RouteDefinitionRouteLocator.DEFAULT_FILTERS, this.gatewayProperties.getDefaultFilters());
		for (RouteDefinition route : this.gatewayProperties.getRoutes()) {
			check(route.getId(), route.getFilters());
		}
	}

	private void check(String routeId, List<FilterDefinition> filters) {
		for (FilterDefinition filter : filters) {
			if (FILTER_NAME.equals(filter.getName()) && usesWindowLimiter(filter.getArgs())
					&& noSpel(filter.getArgs())) {
				WindowRateLimiter.policyFor(routeId, filter.getArgs());
			}
		}
	}

	private static boolean usesWindowLimiter(Map<String, String> args) {
		String limiter = args.getOrDefault("rate-limiter", args.get("rateLimiter"));
		if (limiter == null) {
			// The window limiter is the filter's default (it is @Primary).
			return true;
		}
		return limiter.contains("@" + WindowRateLimiter.BEAN_NAME);
	}

	private static boolean noSpel(Map<String, String> args) {
		return args.entrySet()
			.stream()
			.filter(arg -> arg.getKey().startsWith(RouteArgs.PREFIX))
			.noneMatch(arg -> arg.getValue() != null && arg.getValue().contains("#{"));
	}

}
