package io.windowlimiter.mvc;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.windowlimiter.core.CountStatuses;
import io.windowlimiter.core.DenyEmptyKey;
import io.windowlimiter.core.LlmSettings;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.RefusalStatus;
import io.windowlimiter.core.ResponseCost;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.MaxDelay;
import io.windowlimiter.core.policy.RouteArgs;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.mvc.key.MvcKeyResolver;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.gateway.server.mvc.config.FilterProperties;
import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.cloud.gateway.server.mvc.config.RouteProperties;
import org.springframework.core.env.Environment;

/**
 * Checks every {@code WindowRateLimit} filter of the routes in properties
 * ({@code spring.cloud.gateway.server.webmvc.routes} and {@code routes-map}) before Server MVC builds
 * them, and gives the core their limits. A mistake stops start-up with the route and the property named:
 * an argument the filter does not have (Server MVC's binding would drop it silently) or a {@code max-delay}
 * (it would park a servlet thread), the LLM arguments ({@code llm}, {@code max-body-bytes}, a limit's
 * {@code unit}) as the WebFlux filter refuses them, a missing or unknown key resolver (one whose keys are
 * credentials marks the route so, {@link CredentialKeys}), limits {@link RouteArgs}
 * refuses, a bad {@code count-statuses}, {@code deny-empty-key}, header name or refusal status
 * ({@code status-code}, {@code empty-key-status}), a second
 * {@code WindowRateLimit} on one route.
 */
public final class MvcRouteCheck {

	static final String FILTER_NAME = "windowRateLimit";

	/** What the core decides for any adapter, as on the WebFlux filter; {@code unit} is checked here. */
	private static final Set<String> LIMITER_ARGUMENTS = Set.of("algorithm", "limit", "window", "log-storage", "burst",
			"name", "scope", "plan", "cost", "shadow", "fail-mode", "instances", "calendar", "time-zone", "week-start",
			"block-for", "quota-status", "allow", "deny", "lease", RouteArgs.CREDENTIAL_KEYS);

	private static final String ARGUMENTS = "algorithm, burst, cost, fail-mode, instances, limit, log-storage, "
			+ "name, plan, scope, shadow, window, unit, model, calendar, time-zone, week-start, block-for, quota-status, "
			+ "allow, deny, lease, credential-keys, limits[i].*, key-resolver, deny-empty-key, cost-from-header, count-statuses, "
			+ "cost-from-response-header, status-code, empty-key-status, llm, max-body-bytes";

	private static final Pattern INDEXED = Pattern.compile("limits(?:\\[\\d+]|\\.\\d+)\\.([a-z-]+)");

	private final List<String> checked = new ArrayList<>();

	public MvcRouteCheck(Environment environment, RateLimiterCore core, ListableBeanFactory beans) {
		GatewayMvcProperties gateway = Binder.get(environment)
			.bindOrCreate(GatewayMvcProperties.PREFIX, GatewayMvcProperties.class);
		List<RouteProperties> routes = gateway.getRoutes();
		for (int i = 0; i < routes.size(); i++) {
			check(routes.get(i).getId(), GatewayMvcProperties.PREFIX + ".routes[" + i + "]", routes.get(i), core, beans);
		}
		gateway.getRoutesMap().forEach((name, route) -> {
			String id = (route.getId() != null && !route.getId().isBlank()) ? route.getId() : name;
			check(id, GatewayMvcProperties.PREFIX + ".routes-map." + name, route, core, beans);
		});
	}

	/** The ids of the routes checked and configured, in order. */
	public List<String> routes() {
		return List.copyOf(this.checked);
	}

	private void check(String routeId, String routePath, RouteProperties route, RateLimiterCore core,
			ListableBeanFactory beans) {
		List<FilterProperties> filters = route.getFilters();
		String first = null;
		for (int j = 0; j < filters.size(); j++) {
			FilterProperties filter = filters.get(j);
			if (filter.getName() == null || !FILTER_NAME.equals(uncapitalize(filter.getName()))) {
				continue;
			}
			String path = routePath + ".filters[" + j + "].args.";
			if (first != null) {
				throw new InvalidRouteConfigurationException(routeId, routePath + ".filters[" + j + "]",
						"is a second WindowRateLimit (the first is " + first + ")",
						"one WindowRateLimit per route on Server MVC; put several limits in one, limits[i].*");
			}
			first = routePath + ".filters[" + j + "]";
			configure(routeId, path, filter.getArgs(), core, beans);
			this.checked.add(routeId);
		}
	}

	private static void configure(String routeId, String path, Map<String, String> args, RateLimiterCore core,
			ListableBeanFactory beans) {
		Map<String, Object> limiter = new TreeMap<>();
		Map<String, Object> own = new TreeMap<>();
		args.forEach((written, value) -> {
			// keyResolver and key-resolver bind alike; the checks know the dashed form
			String name = written.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
			if (name.equals("count-statuses")) {
				CountStatuses.parse(routeId, path + name, value);
			}
			if (name.equals("deny-empty-key")) {
				DenyEmptyKey.parse(routeId, path + name, value);
			}
			if (name.equals("status-code") || name.equals("empty-key-status")) {
				RefusalStatus.parse(routeId, path + name, value, 0);
			}
			if (name.equals("cost-from-header") || name.equals("cost-from-response-header")) {
				ResponseCost.headerName(routeId, path + name, value);
			}
			if (WindowRateLimitConfig.ADAPTER_ARGUMENTS.contains(name)) {
				own.put(name, value);
				return;
			}
			if (name.equals(MaxDelay.PROPERTY)) {
				throw new InvalidRouteConfigurationException(routeId, path + name, "is not available on Server MVC: "
						+ "holding a request until its later slot would park its servlet thread that long",
						"no max-delay on Server MVC (a refusal answers at once, with Retry-After); requests are held "
								+ "on the WebFlux gateway only");
			}
			Matcher indexed = INDEXED.matcher(name);
			if (!LIMITER_ARGUMENTS.contains(name) && !name.equals("unit") && !name.equals("model") && !indexed.matches()) {
				throw InvalidRouteConfigurationException.unknownArgument(routeId, path + name, "is no argument of WindowRateLimit",
						ARGUMENTS);
			}
			limiter.put(RouteArgs.PREFIX + name, value);
		});
		Object lease = limiter.get(RouteArgs.PREFIX + "lease");
		if (lease != null && !lease.toString().trim().matches("0+(ms|s)?") && (own.containsKey("count-statuses") || own.containsKey("cost-from-response-header"))) {
			throw new InvalidRouteConfigurationException(routeId, path + "lease", "is '" + lease + "' beside "
					+ (own.containsKey("count-statuses") ? "count-statuses" : "cost-from-response-header"),
					"either lease or a cost the response settles (count-statuses, cost-from-response-header): a request "
							+ "admitted from a leased part has no reservation of its own to settle");
		}
		String keyResolver = args.containsKey("key-resolver") ? args.get("key-resolver") : args.get("keyResolver");
		String bean = checkKeyResolver(routeId, path, keyResolver, beans);
		LlmSettings llm;
		try {
			llm = LlmSettings.of(routeId, own, limiter);
		}
		catch (InvalidRouteConfigurationException ex) {
			throw new InvalidRouteConfigurationException(routeId, path + ex.getProperty(), ex.getFound(),
					ex.getAllowed());
		}
		try {
			// a resolver of credentials (apiKeyResolver) has the core hash the keys where they enter it; limits
			// count tokens only where the filter meters LLM calls; no slot is released on Server MVC
			core.configure(routeId, CredentialKeys.marked(limiter, beans.getBean(bean)), SlotRelease.NEVER, llm != null);
		}
		catch (InvalidRouteConfigurationException ex) {
			if (!"route".equals(ex.getKind()) || !ex.getProperty().startsWith(RouteArgs.PREFIX)) {
				throw ex;
			}
			// the core names WebFlux's window-rate-limiter.* argument; this route wrote it under args
			throw new InvalidRouteConfigurationException(routeId,
					path + ex.getProperty().substring(RouteArgs.PREFIX.length()), ex.getFound(), ex.getAllowed());
		}
	}

	/** @return the name of the key resolver bean the route names */
	private static String checkKeyResolver(String routeId, String path, String name, ListableBeanFactory beans) {
		List<String> known = List.of(beans.getBeanNamesForType(MvcKeyResolver.class));
		String allowed = "the name of a MvcKeyResolver bean: " + String.join(", ", known);
		if (name == null || name.isBlank()) {
			throw new InvalidRouteConfigurationException(routeId, path + "key-resolver", "is missing", allowed);
		}
		String bean = new WindowRateLimitConfig().setKeyResolver(name).getKeyResolver();
		if (!known.contains(bean)) {
			throw new InvalidRouteConfigurationException(routeId, path + "key-resolver", "is '" + name + "'", allowed);
		}
		return bean;
	}

	private static String uncapitalize(String name) {
		return name.isEmpty() ? name : name.substring(0, 1).toLowerCase(Locale.ROOT) + name.substring(1);
	}

}
