package io.windowlimiter.gateway;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;

/**
 * Checks the routes in the gateway's properties that use the window rate limiter while the application
 * starts, so a bad one stops start-up. The gateway itself builds routes later and only logs a route
 * that fails, which would leave the API unprotected or unrouted without anyone noticing.
 *
 * <p>A route uses this limiter when its {@code RequestRateLimiter} filter names it
 * ({@code rate-limiter: "#{@windowRateLimiter}"}), or names no limiter while this one is the opted-in
 * default. Other routes are left alone, except that {@code window-rate-limiter.*} arguments on a filter
 * whose limiter is another are refused: they would be silently ignored. Arguments given as SpEL
 * ({@code #{...}}) are only known when routes are built; those routes are checked then, by
 * {@link WindowRateLimiter#onApplicationEvent}.
 */
public class StartupRouteCheck implements SmartInitializingSingleton {

	static final String FILTER_NAME = "RequestRateLimiter";

	/** What to do instead of a second filter with this limiter on one route. */
	static final String ONE_PER_ROUTE = "one per route; put several limits on one key in one filter with "
			+ RouteArgs.PREFIX + "limits[i].*; limits on different keys (say per API key and per client IP) on "
			+ "one route are not supported";

	private static final String BY_NAME = "rate-limiter: \"#{@" + WindowRateLimiter.BEAN_NAME + "}\"";

	private final GatewayProperties gatewayProperties;

	private final PolicyRegistry registry;

	private final boolean defaultLimiter;

	/**
	 * @param gatewayProperties the routes to check
	 * @param registry checks each route with the plans, and the scopes across routes
	 * @param defaultLimiter whether the window rate limiter is the filter's default, for filters naming none
	 */
	public StartupRouteCheck(GatewayProperties gatewayProperties, PolicyRegistry registry, boolean defaultLimiter) {
		this.gatewayProperties = gatewayProperties;
		this.registry = registry;
		this.defaultLimiter = defaultLimiter;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Map<String, Map<String, String>> limited = new LinkedHashMap<>();
		String defaults = RouteDefinitionRouteLocator.DEFAULT_FILTERS;
		int inDefaults = check(defaults, this.gatewayProperties.getDefaultFilters(), limited);
		onePerRoute(defaults, inDefaults, "appears " + inDefaults + " times among the default filters");
		for (RouteDefinition route : this.gatewayProperties.getRoutes()) {
			int own = check(route.getId(), route.getFilters(), limited);
			onePerRoute(route.getId(), own + inDefaults, (inDefaults == 0) ? "appears " + own + " times"
					: "appears on the route and among the default filters, which apply to it too");
		}
		// each route on its own and with the plans, then every scope across the routes
		this.registry.check(limited);
	}

	/** Checks the filters that use this limiter, collects their arguments and counts them. */
	private int check(String routeId, List<FilterDefinition> filters, Map<String, Map<String, String>> limited) {
		int using = 0;
		for (FilterDefinition filter : filters) {
			if (!FILTER_NAME.equals(filter.getName())) {
				continue;
			}
			Map<String, String> args = filter.getArgs();
			String limiter = args.getOrDefault("rate-limiter", args.get("rateLimiter"));
			if (usesWindowLimiter(limiter)) {
				using++;
				if (noSpel(args)) {
					limited.put(routeId, args);
				}
			}
			else if (RouteArgs.appliesTo(args)) {
				String which = (limiter != null) ? "'" + limiter + "'"
						: "not set, so the gateway's default limiter decides";
				throw new InvalidRouteConfigurationException(routeId, "rate-limiter",
						"is " + which + " and would ignore the " + RouteArgs.PREFIX + "* arguments",
						BY_NAME + " on this filter, or window-rate-limiter.default-limiter: true to make the "
								+ "window rate limiter the default");
			}
		}
		return using;
	}

	private boolean usesWindowLimiter(@Nullable String limiter) {
		if (limiter == null) {
			return this.defaultLimiter;
		}
		return limiter.contains("@" + WindowRateLimiter.BEAN_NAME);
	}

	/**
	 * The gateway's limiters keep one policy per route id and hear only (route, key), so two filters with
	 * this limiter on one route would share one policy and count each request twice.
	 */
	private static void onePerRoute(String routeId, int filters, String what) {
		if (filters > 1) {
			throw new InvalidRouteConfigurationException(routeId, FILTER_NAME + " with " + WindowRateLimiter.BEAN_NAME,
					what, ONE_PER_ROUTE);
		}
	}

	private static boolean noSpel(Map<String, String> args) {
		return args.entrySet()
			.stream()
			.filter(arg -> arg.getKey().startsWith(RouteArgs.PREFIX))
			.noneMatch(arg -> arg.getValue() != null && arg.getValue().contains("#{"));
	}

}
