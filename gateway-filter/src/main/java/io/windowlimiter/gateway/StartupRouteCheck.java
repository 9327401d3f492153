package io.windowlimiter.gateway;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.PrincipalNameKeyResolver;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;
import org.springframework.util.ClassUtils;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.gateway.filter.WindowRateLimitGatewayFilterFactory;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteArgs;

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

	/** The resolvers a route can name, for messages. */
	private static final String KEY_RESOLVERS = "key-resolver: \"#{@headerKeyResolver}\" (the X-API-Key header, "
			+ "or window-rate-limiter.key-header), \"#{@apiKeyResolver}\" (an API key as the LLM SDKs send it: "
			+ "Authorization: Bearer, x-api-key or api-key), \"#{@clientIpKeyResolver}\" (the client's IP address), "
			+ "\"#{@principalNameKeyResolver}\" (the authenticated principal) or a KeyResolver bean of yours";

	/** Spring Security's reactive filter chain: the usual way a request gets a principal. */
	private static final String SECURITY_FILTER_CHAIN = "org.springframework.security.web.server.WebFilterChainProxy";

	private static final Log logger = LogFactory.getLog(StartupRouteCheck.class);

	private final GatewayProperties gatewayProperties;

	private final PolicyRegistry registry;

	private final boolean defaultLimiter;

	private final @Nullable ListableBeanFactory beans;

	/**
	 * @param gatewayProperties the routes to check
	 * @param registry checks each route with the plans, and the scopes across routes
	 * @param defaultLimiter whether the window rate limiter is the filter's default, for filters naming none
	 * @param beans where the filter's default key resolver is found, for routes naming none; null: not checked
	 */
	public StartupRouteCheck(GatewayProperties gatewayProperties, PolicyRegistry registry, boolean defaultLimiter,
			@Nullable ListableBeanFactory beans) {
		this.gatewayProperties = gatewayProperties;
		this.registry = registry;
		this.defaultLimiter = defaultLimiter;
		this.beans = beans;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Map<String, Map<String, ?>> limited = new LinkedHashMap<>();
		Set<String> releasing = new HashSet<>();
		Set<String> metering = new HashSet<>();
		String defaults = RouteDefinitionRouteLocator.DEFAULT_FILTERS;
		int inDefaults = check(defaults, this.gatewayProperties.getDefaultFilters(), limited);
		onePerRoute(defaults, inDefaults, "appears " + inDefaults + " times among the default filters");
		for (RouteDefinition route : this.gatewayProperties.getRoutes()) {
			int own = check(route.getId(), route.getFilters(), limited);
			onePerRoute(route.getId(), own + inDefaults, (inDefaults == 0) ? "appears " + own + " times"
					: "appears on the route and among the default filters, which apply to it too");
			windowRateLimits(route, own > 0, limited, releasing, metering);
		}
		// each route on its own and with the plans, then every scope across the routes; concurrency only where
		// a WindowRateLimit filter releases its slots, tokens only where one meters LLM calls
		this.registry.check(limited, releasing, metering);
	}

	/**
	 * Checks the route's WindowRateLimit filters (the default filters' apply to it too): each one's
	 * arguments, and that each has a policy of its own, apart from the route's RequestRateLimiter's.
	 */
	private void windowRateLimits(RouteDefinition route, boolean usesLimiter, Map<String, Map<String, ?>> limited,
			Set<String> releasing, Set<String> metering) {
		String routeId = route.getId();
		List<FilterDefinition> filters = new ArrayList<>(this.gatewayProperties.getDefaultFilters());
		filters.addAll(route.getFilters());
		Set<String> policies = new HashSet<>();
		for (FilterDefinition filter : filters) {
			if (!WindowRateLimitGatewayFilterFactory.NAME.equals(filter.getName())) {
				continue;
			}
			String policyId = WindowRateLimitGatewayFilterFactory.check(routeId, filter.getArgs(), this.registry);
			if (!policies.add(policyId) || (usesLimiter && policyId.equals(routeId))) {
				throw new InvalidRouteConfigurationException(routeId, "id", "is " + (policyId.equals(routeId)
						? "not set on more than one of its limits' filters (WindowRateLimit"
								+ (usesLimiter ? ", RequestRateLimiter with " + WindowRateLimiter.BEAN_NAME : "") + ")"
						: "'" + policyId.substring(routeId.length() + 1) + "' on two of its WindowRateLimit filters"),
						"an id of its own for each WindowRateLimit filter of a route but one (default filters "
								+ "included), e.g. id: ip; the filter's limits are then known as " + routeId
								+ "@<id>");
			}
			Map<String, Object> limits = WindowRateLimitGatewayFilterFactory.limitArgs(filter.getArgs());
			if (limits.values().stream().noneMatch(value -> value.toString().contains("#{"))) {
				limited.put(policyId, limits);
				releasing.add(policyId);
				if (filter.getArgs().get("llm") != null) {
					metering.add(policyId);
				}
			}
		}
	}

	/** Checks the filters that use this limiter, collects their arguments and counts them. */
	private int check(String routeId, List<FilterDefinition> filters, Map<String, Map<String, ?>> limited) {
		int using = 0;
		for (FilterDefinition filter : filters) {
			if (!FILTER_NAME.equals(filter.getName())) {
				continue;
			}
			Map<String, String> args = filter.getArgs();
			String limiter = args.getOrDefault("rate-limiter", args.get("rateLimiter"));
			if (usesWindowLimiter(limiter)) {
				using++;
				keyResolver(routeId, args);
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

	/**
	 * A filter of ours that names no key resolver gets the gateway's default: its principalNameKeyResolver,
	 * unless the application defines a KeyResolver bean of its own. Gateway 5 has no property for that
	 * default (its request-rate-limiter.* properties are not bound), so the bean is the only deliberate way
	 * to set one: kept, and named in the log. The principal resolver with nothing that authenticates keys no
	 * request (each gets an empty 403): refused.
	 */
	private void keyResolver(String routeId, Map<String, String> args) {
		if (this.beans == null || args.containsKey("key-resolver") || args.containsKey("keyResolver")) {
			return;
		}
		RequestRateLimiterGatewayFilterFactory factory = this.beans
			.getBeanProvider(RequestRateLimiterGatewayFilterFactory.class)
			.getIfUnique();
		KeyResolver fallback = (factory != null) ? factory.getDefaultKeyResolver() : null;
		if (fallback == null) {
			return;
		}
		if (fallback instanceof PrincipalNameKeyResolver && !authenticates()) {
			throw new InvalidRouteConfigurationException(routeId, "key-resolver", "is not set, so the gateway's "
					+ "principalNameKeyResolver keys clients by their authenticated principal, and nothing here "
					+ "authenticates (no Spring Security web filter chain): every request would have an empty key "
					+ "and be refused with an empty 403", KEY_RESOLVERS);
		}
		String name = this.beans.getBeansOfType(KeyResolver.class)
			.entrySet()
			.stream()
			.filter(bean -> bean.getValue() == fallback)
			.map(Map.Entry::getKey)
			.findFirst()
			.orElse(fallback.getClass().getName());
		logger.warn("Route '" + routeId + "' has no key-resolver: its clients are keyed by the default KeyResolver "
				+ "bean '" + name + "' (" + fallback.getClass().getName() + "). Name it on the route, key-resolver: "
				+ "\"#{@" + name + "}\", to make that explicit; " + KEY_RESOLVERS + " are the others.");
	}

	private boolean authenticates() {
		if (!ClassUtils.isPresent(SECURITY_FILTER_CHAIN, getClass().getClassLoader()) || this.beans == null) {
			return false;
		}
		return this.beans.getBeanNamesForType(ClassUtils.resolveClassName(SECURITY_FILTER_CHAIN,
				getClass().getClassLoader())).length > 0;
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
