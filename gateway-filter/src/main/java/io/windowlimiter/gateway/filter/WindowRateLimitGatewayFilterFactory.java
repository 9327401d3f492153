package io.windowlimiter.gateway.filter;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.windowlimiter.core.LlmSettings;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteArgs;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.CostResolver;
import io.windowlimiter.gateway.plan.PlanResolver;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.support.HasRouteId;

/**
 * The {@code WindowRateLimit} filter: the window rate limiter as a filter of its own, beside the
 * {@code RequestRateLimiter} integration. Its arguments are the limits' ({@code limit}, {@code window},
 * {@code limits[i].*} ..., as {@code window-rate-limiter.*} on {@code RequestRateLimiter}, without the
 * prefix), {@code key-resolver}, and what the gateway's filter cannot do: a cost per request
 * ({@code cost-from-header}, {@code cost-resolver}), several filters per route ({@code id}), and counts
 * decided by the response ({@code count-statuses}, {@code cost-from-response-header}).
 *
 * <p>From YAML:
 * <pre>
 * filters:
 * - name: WindowRateLimit
 *   args:
 *     key-resolver: "#{&#64;clientIpKeyResolver}"
 *     limit: 5
 *     window: 15m
 *     count-statuses: 401
 * </pre>
 * From the Java DSL, with the route's id: {@code f.filter(windowRateLimit.apply("login", c -> c
 * .setKeyResolver(clientIpKeyResolver).setLimit("5").setWindow("15m")))}.
 *
 * <p>Each filter is a policy of its own in the core: known by the route's id, or {@code <route id>@<id>}
 * when it has an {@code id} (a route with several filters gives all but one an id).
 */
public class WindowRateLimitGatewayFilterFactory extends AbstractGatewayFilterFactory<WindowRateLimitGatewayFilterFactory.Config> {

	/** The filter's name in routes. */
	public static final String NAME = "WindowRateLimit";

	private final RateLimiterCore core;

	private final @Nullable PlanResolver planResolver;

	private final boolean problemDetails;

	/**
	 * @param core decides
	 * @param planResolver reads a client's plan from its request; null for none
	 * @param problemDetails whether refusals get a problem-details body (the ProblemDetailsFilter writes it)
	 */
	public WindowRateLimitGatewayFilterFactory(RateLimiterCore core, @Nullable PlanResolver planResolver,
			boolean problemDetails) {
		super(Config.class);
		this.core = core;
		this.planResolver = planResolver;
		this.problemDetails = problemDetails;
	}

	@Override
	public String name() {
		return NAME;
	}

	/**
	 * Checks the filter's arguments and gives the core its limits.
	 * @throws InvalidRouteConfigurationException naming the route (or filter), the argument and what is allowed
	 */
	@Override
	public GatewayFilter apply(Config config) {
		String routeId = config.getRouteId();
		if (routeId == null || routeId.isEmpty()) {
			throw new IllegalArgumentException("A WindowRateLimit filter needs its route's id, which routes from "
					+ "properties give it; in the Java DSL use apply(routeId, config)");
		}
		Map<String, Object> own = config.ownArgs();
		FilterSettings settings = FilterSettings.of(routeId, own);
		FilterSettings.checkLeaseNotSettled(settings.policyId(), config.getLease(),
				(own.get("count-statuses") != null) ? own.get("count-statuses").toString() : null,
				(own.get("cost-from-response-header") != null) ? own.get("cost-from-response-header").toString() : null);
		Map<String, Object> limitArgs = config.limitArgs();
		LlmSettings llm = LlmSettings.of(settings.policyId(), config.ownArgs(), limitArgs);
		boolean releasesSlots;
		try {
			// a slot is released when the exchange ends, which is when the response is written only for a filter
			// ordered before the gateway writes it: what a filter counting concurrency (or an LLM filter) is; on
			// any other an override counting concurrency is refused, as on a route of another adapter
			// a resolver of credentials (apiKeyResolver) has the core hash the keys where they enter it
			this.core.configure(settings.policyId(), CredentialKeys.marked(limitArgs, config.getKeyResolver()),
					(llm != null) ? SlotRelease.ALWAYS : SlotRelease.IF_COUNTED, llm != null);
			CompiledRoute route = this.core.route(settings.policyId());
			releasesSlots = route != null && route.releasesSlots;
		}
		catch (InvalidRouteConfigurationException ex) {
			throw unprefixed(ex);
		}
		KeyResolver keyResolver = config.getKeyResolver();
		if (keyResolver == null) {
			throw new IllegalStateException("checked by FilterSettings");
		}
		WindowRateLimitFilter filter = new WindowRateLimitFilter(this.core, settings, keyResolver,
				config.getCostResolver(), this.planResolver, this.problemDetails, llm);
		// an LLM filter decorates the response, which NettyWriteResponseFilter (order -1) writes: it must come
		// before it, as the gateway's ModifyResponseBody does; a filter counting concurrency too, so that its
		// exchange ends (and its slots are released) once the whole response is written, not at its headers
		return releasesSlots ? new OrderedGatewayFilter(filter, NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1)
				: filter;
	}

	/**
	 * Checks one filter's arguments as the route's properties give them (before {@code #{...}} is evaluated),
	 * as start-up does: every name known, the filter's own values, and its limits with the plans, unless
	 * given as SpEL (then checked when the route is built).
	 * @param routeId the route the filter is on
	 * @return the id the filter's limits are known by: the route's, or {@code <route id>@<id>}
	 * @throws InvalidRouteConfigurationException naming the route, the argument and what is allowed
	 */
	public static String check(String routeId, Map<String, String> args, PolicyRegistry registry) {
		Map<String, String> named = new LinkedHashMap<>();
		args.forEach((name, value) -> named.put(kebab(name), value));
		for (String name : named.keySet()) {
			if (!FilterSettings.isKnown(name)) {
				throw InvalidRouteConfigurationException.unknownArgument(routeId, name, "is not an argument of " + NAME,
						FilterSettings.KNOWN);
			}
		}
		FilterSettings settings = FilterSettings.of(routeId, named);
		Map<String, Object> limits = prefixed(named);
		LlmSettings llm = LlmSettings.of(settings.policyId(), named, limits);
		if (limits.values().stream().noneMatch(value -> value.toString().contains("#{"))) {
			try {
				registry.check(Map.of(settings.policyId(), limits), Set.of(settings.policyId()),
						(llm != null) ? Set.of(settings.policyId()) : Set.of());
			}
			catch (InvalidRouteConfigurationException ex) {
				throw unprefixed(ex);
			}
		}
		return settings.policyId();
	}

	/** {@code keyResolver} as {@code key-resolver}: the gateway binds either. */
	private static String kebab(String name) {
		StringBuilder out = new StringBuilder(name.length() + 4);
		for (char c : name.toCharArray()) {
			if (Character.isUpperCase(c)) {
				out.append('-').append(Character.toLowerCase(c));
			}
			else {
				out.append(c);
			}
		}
		return out.toString();
	}

	/**
	 * The limits' arguments of a filter from properties, as {@code RouteArgs} reads them: prefixed with
	 * {@code window-rate-limiter.}; the filter's own arguments are left out.
	 */
	public static Map<String, Object> limitArgs(Map<String, ?> args) {
		return prefixed(args);
	}

	private static Map<String, Object> prefixed(Map<String, ?> args) {
		Map<String, Object> prefixed = new LinkedHashMap<>();
		args.forEach((name, value) -> {
			if (!FilterSettings.OWN.contains(kebab(name)) && value != null) {
				prefixed.put(RouteArgs.PREFIX + kebab(name), value);
			}
		});
		return prefixed;
	}

	/**
	 * A mistake in the limits' arguments, as the filter's arguments are written: without the
	 * {@code window-rate-limiter.} prefix the shared messages give them.
	 */
	public static InvalidRouteConfigurationException unprefixed(InvalidRouteConfigurationException ex) {
		return new InvalidRouteConfigurationException(ex.getKind(), ex.getRouteId(), strip(ex.getProperty()),
				strip(ex.getFound()), strip(ex.getAllowed()));
	}

	private static String strip(String text) {
		return text.replace(" (each prefixed " + RouteArgs.PREFIX + ")", "").replace(RouteArgs.PREFIX, "");
	}

	/**
	 * One filter's arguments. The limits' are text, checked by the rules and messages of the
	 * {@code RequestRateLimiter} integration's; setters return the config, for the Java DSL.
	 */
	public static class Config implements HasRouteId {

		private @Nullable String routeId;

		private @Nullable String id;

		private @Nullable KeyResolver keyResolver;

		private @Nullable CostResolver costResolver;

		private @Nullable String costFromHeader;

		private @Nullable String countStatuses;

		private @Nullable String costFromResponseHeader;

		private @Nullable String statusCode;

		private @Nullable String denyEmptyKey;

		private @Nullable String emptyKeyStatus;

		private @Nullable String llm;

		private @Nullable String maxBodyBytes;

		private final Map<String, String> limit = new LinkedHashMap<>();

		private List<Map<String, String>> limits = new ArrayList<>();

		/** The filter's own arguments by name, as written (resolvers as the beans). */
		Map<String, Object> ownArgs() {
			Map<String, Object> args = new LinkedHashMap<>();
			put(args, "id", this.id);
			put(args, "key-resolver", this.keyResolver);
			put(args, "cost-resolver", this.costResolver);
			put(args, "cost-from-header", this.costFromHeader);
			put(args, "count-statuses", this.countStatuses);
			put(args, "cost-from-response-header", this.costFromResponseHeader);
			put(args, "status-code", this.statusCode);
			put(args, "deny-empty-key", this.denyEmptyKey);
			put(args, "empty-key-status", this.emptyKeyStatus);
			put(args, "llm", this.llm);
			put(args, "max-body-bytes", this.maxBodyBytes);
			return args;
		}

		/** The limits' arguments, prefixed {@code window-rate-limiter.} as {@code RouteArgs} reads them. */
		Map<String, Object> limitArgs() {
			Map<String, Object> args = new LinkedHashMap<>();
			this.limit.forEach((name, value) -> args.put(RouteArgs.PREFIX + name, value));
			for (int i = 0; i < this.limits.size(); i++) {
				int index = i;
				this.limits.get(i).forEach((name, value) -> args.put(RouteArgs.PREFIX + "limits[" + index + "]." + name, value));
			}
			return args;
		}

		private static void put(Map<String, Object> args, String name, @Nullable Object value) {
			if (value != null) {
				args.put(name, value);
			}
		}

		private Config limit(String name, @Nullable String value) {
			if (value == null) {
				this.limit.remove(name);
			}
			else {
				this.limit.put(name, value);
			}
			return this;
		}

		@Override
		public void setRouteId(String routeId) {
			this.routeId = routeId;
		}

		@Override
		public @Nullable String getRouteId() {
			return this.routeId;
		}

		public @Nullable String getId() {
			return this.id;
		}

		/** The filter's id among the route's; its limits are then known as {@code <route id>@<id>}. */
		public Config setId(@Nullable String id) {
			this.id = id;
			return this;
		}

		public @Nullable KeyResolver getKeyResolver() {
			return this.keyResolver;
		}

		public Config setKeyResolver(@Nullable KeyResolver keyResolver) {
			this.keyResolver = keyResolver;
			return this;
		}

		public @Nullable CostResolver getCostResolver() {
			return this.costResolver;
		}

		public Config setCostResolver(@Nullable CostResolver costResolver) {
			this.costResolver = costResolver;
			return this;
		}

		public @Nullable String getCostFromHeader() {
			return this.costFromHeader;
		}

		public Config setCostFromHeader(@Nullable String costFromHeader) {
			this.costFromHeader = costFromHeader;
			return this;
		}

		public @Nullable String getCountStatuses() {
			return this.countStatuses;
		}

		public Config setCountStatuses(@Nullable String countStatuses) {
			this.countStatuses = countStatuses;
			return this;
		}

		public @Nullable String getCostFromResponseHeader() {
			return this.costFromResponseHeader;
		}

		public Config setCostFromResponseHeader(@Nullable String costFromResponseHeader) {
			this.costFromResponseHeader = costFromResponseHeader;
			return this;
		}

		public @Nullable String getStatusCode() {
			return this.statusCode;
		}

		public Config setStatusCode(@Nullable String statusCode) {
			this.statusCode = statusCode;
			return this;
		}

		public @Nullable String getDenyEmptyKey() {
			return this.denyEmptyKey;
		}

		public Config setDenyEmptyKey(@Nullable String denyEmptyKey) {
			this.denyEmptyKey = denyEmptyKey;
			return this;
		}

		public @Nullable String getEmptyKeyStatus() {
			return this.emptyKeyStatus;
		}

		public Config setEmptyKeyStatus(@Nullable String emptyKeyStatus) {
			this.emptyKeyStatus = emptyKeyStatus;
			return this;
		}

		public @Nullable String getLlm() {
			return this.llm;
		}

		/** The API the route's requests speak, openai or anthropic: token limits settle to the usage it reports. */
		public Config setLlm(@Nullable String llm) {
			this.llm = llm;
			return this;
		}

		public @Nullable String getMaxBodyBytes() {
			return this.maxBodyBytes;
		}

		/** The largest request body an LLM filter reads to estimate its tokens; larger ones are answered 413. */
		public Config setMaxBodyBytes(@Nullable String maxBodyBytes) {
			this.maxBodyBytes = maxBodyBytes;
			return this;
		}

		public @Nullable String getUnit() {
			return this.limit.get("unit");
		}

		/** A single limit's unit: tokens or usd (both need llm), or requests. */
		public Config setUnit(@Nullable String unit) {
			return limit("unit", unit);
		}

		public @Nullable String getModel() {
			return this.limit.get("model");
		}

		/** A single limit's model (needs llm): it counts only the calls naming a model it matches. */
		public Config setModel(@Nullable String model) {
			return limit("model", model);
		}

		public @Nullable String getAlgorithm() {
			return this.limit.get("algorithm");
		}

		public Config setAlgorithm(@Nullable String algorithm) {
			return limit("algorithm", algorithm);
		}

		public @Nullable String getLimit() {
			return this.limit.get("limit");
		}

		public Config setLimit(@Nullable String limit) {
			return limit("limit", limit);
		}

		public @Nullable String getWindow() {
			return this.limit.get("window");
		}

		public Config setWindow(@Nullable String window) {
			return limit("window", window);
		}

		public @Nullable String getLogStorage() {
			return this.limit.get("log-storage");
		}

		public Config setLogStorage(@Nullable String logStorage) {
			return limit("log-storage", logStorage);
		}

		public @Nullable String getBurst() {
			return this.limit.get("burst");
		}

		public Config setBurst(@Nullable String burst) {
			return limit("burst", burst);
		}

		public @Nullable String getName() {
			return this.limit.get("name");
		}

		/** The name of a single limit, shown to clients; by default the filter's policy id. */
		public Config setName(@Nullable String name) {
			return limit("name", name);
		}

		public @Nullable String getScope() {
			return this.limit.get("scope");
		}

		public Config setScope(@Nullable String scope) {
			return limit("scope", scope);
		}

		public @Nullable String getPlan() {
			return this.limit.get("plan");
		}

		public Config setPlan(@Nullable String plan) {
			return limit("plan", plan);
		}

		public @Nullable String getCost() {
			return this.limit.get("cost");
		}

		public Config setCost(@Nullable String cost) {
			return limit("cost", cost);
		}

		public @Nullable String getShadow() {
			return this.limit.get("shadow");
		}

		public Config setShadow(@Nullable String shadow) {
			return limit("shadow", shadow);
		}

		public @Nullable String getFailMode() {
			return this.limit.get("fail-mode");
		}

		public Config setFailMode(@Nullable String failMode) {
			return limit("fail-mode", failMode);
		}

		public @Nullable String getInstances() {
			return this.limit.get("instances");
		}

		public Config setInstances(@Nullable String instances) {
			return limit("instances", instances);
		}

		public @Nullable String getCalendar() {
			return this.limit.get("calendar");
		}

		/** A calendar quota: {@code day}, {@code week} or {@code month}, in {@code time-zone}. */
		public Config setCalendar(@Nullable String calendar) {
			return limit("calendar", calendar);
		}

		public @Nullable String getTimeZone() {
			return this.limit.get("time-zone");
		}

		public Config setTimeZone(@Nullable String timeZone) {
			return limit("time-zone", timeZone);
		}

		public @Nullable String getWeekStart() {
			return this.limit.get("week-start");
		}

		public Config setWeekStart(@Nullable String weekStart) {
			return limit("week-start", weekStart);
		}

		public @Nullable String getBlockFor() {
			return this.limit.get("block-for");
		}

		/** A penalty: a client a limit refuses is refused this long. */
		public Config setBlockFor(@Nullable String blockFor) {
			return limit("block-for", blockFor);
		}

		public @Nullable String getQuotaStatus() {
			return this.limit.get("quota-status");
		}

		public Config setQuotaStatus(@Nullable String quotaStatus) {
			return limit("quota-status", quotaStatus);
		}

		public @Nullable String getAllow() {
			return this.limit.get("allow");
		}

		/** Client keys (and for the client-IP resolver addresses, CIDR ranges) never limited, comma separated. */
		public Config setAllow(@Nullable String allow) {
			return limit("allow", allow);
		}

		public @Nullable String getDeny() {
			return this.limit.get("deny");
		}

		/** Client keys (addresses, ranges) refused with 403, comma separated. */
		public Config setDeny(@Nullable String deny) {
			return limit("deny", deny);
		}

		public @Nullable String getCredentialKeys() {
			return this.limit.get("credential-keys");
		}

		/**
		 * {@code true}: the route's client keys are credentials, hashed where they enter the limiter, whatever
		 * resolver reads them (the library's apiKeyResolver, and headerKeyResolver on a credential header, say so
		 * themselves).
		 */
		public Config setCredentialKeys(@Nullable String credentialKeys) {
			return limit("credential-keys", credentialKeys);
		}

		public @Nullable String getMaxDelay() {
			return this.limit.get("max-delay");
		}

		/**
		 * How long a request the limits take a little later is held before it goes downstream, instead of
		 * refused: a duration up to 1m, with token-bucket or fixed-window limits (see docs/max-delay.md).
		 */
		public Config setMaxDelay(@Nullable String maxDelay) {
			return limit("max-delay", maxDelay);
		}

		public @Nullable String getLease() {
			return this.limit.get("lease");
		}

		/**
		 * The longest this instance holds a part of a hot client's quota leased from Redis, admitting the client's
		 * requests from it without Redis: a duration up to 1s, with fixed-window, calendar or token-bucket limits
		 * (see docs/hot-clients.md); absent, every request is decided by Redis.
		 */
		public Config setLease(@Nullable String lease) {
			return limit("lease", lease);
		}

		public List<Map<String, String>> getLimits() {
			return this.limits;
		}

		/** Several limits on one key: each {@code limit}, {@code window}, optionally the others of a single limit. */
		public Config setLimits(List<Map<String, String>> limits) {
			this.limits = new ArrayList<>(limits);
			return this;
		}

	}

}
