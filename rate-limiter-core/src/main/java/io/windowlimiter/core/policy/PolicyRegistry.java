package io.windowlimiter.core.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import io.windowlimiter.core.access.RouteLists;
import io.windowlimiter.core.algorithm.WindowPolicy;
import org.jspecify.annotations.Nullable;


/**
 * Compiles, once, what routes, plans and scopes say into the policies requests are decided by: for each
 * route its own limits, or one policy per plan when it uses plans ({@code window-rate-limiter.plan}).
 * Plans ({@code window-rate-limiter.plans.<plan>.limits[i].*}) are checked when the registry is made,
 * routes when they are built, by the same rules ({@link RouteArgs}) and with the same messages.
 *
 * <p>A scope's limits count into keys that every route naming it shares, so they must be the same
 * wherever it is named, for clients without a plan and for clients on each plan alike: a route whose
 * scope differs from another route's is refused, naming both. Nothing here runs per request.
 */
public class PolicyRegistry {

	/** The choice of clients without a plan: the route's own limits or its default plan. */
	public static final String OWN = "";

	/** The choice of clients given limits of their own at run time. */
	public static final String OVERRIDE = "override";

	/** The id the gateway gives its default filters, whose limits apply to routes without their own. */
	public static final String DEFAULT_FILTERS = "defaultFilters";

	/**
	 * Between a route's id and the id of one of its filters that has a policy of its own, as in
	 * {@code login@ip}: plain in Redis keys and in the endpoint's paths, where {@code #} is not.
	 */
	public static final char FILTER_SEPARATOR = '@';

	private static final String PLANS = RouteArgs.PREFIX + "plans";

	private final Map<String, List<RouteLimit>> plans;

	private final Map<String, CompiledRoute> routes = new ConcurrentHashMap<>();

	/**
	 * @param plans each plan's properties by name, {@code limits[i].limit} and so on, unprefixed
	 * @throws InvalidRouteConfigurationException naming the plan and property, if a plan is wrong
	 */
	public PolicyRegistry(Map<String, ? extends Map<String, ?>> plans) {
		Map<String, List<RouteLimit>> parsed = new TreeMap<>();
		plans.forEach((name, args) -> parsed.put(name, parsePlan(name, args)));
		this.plans = parsed;
	}

	/** A registry with the plans of {@code other} and none of its routes. */
	private PolicyRegistry(PolicyRegistry other) {
		this.plans = other.plans;
	}

	private static List<RouteLimit> parsePlan(String name, Map<String, ?> args) {
		if (name.isBlank()) {
			throw new InvalidRouteConfigurationException("plan", name, PLANS, "has a plan without a name",
					"a name for each plan");
		}
		return RouteArgs.parseLimits("plan", name, PLANS + "." + name + ".", args);
	}

	/**
	 * The limits of an override, checked by the rules of a route's limits.
	 * @param target the route or scope the override is for, named in messages
	 * @param limits one map per limit: {@code limit}, {@code window}, optionally {@code algorithm},
	 * {@code log-storage}, {@code burst}, {@code name}, {@code scope}
	 * @throws InvalidRouteConfigurationException naming the target and property, if a limit is wrong
	 */
	public static List<RouteLimit> overrideLimits(String target, List<? extends Map<String, ?>> limits) {
		Map<String, Object> args = new LinkedHashMap<>();
		for (int i = 0; i < limits.size(); i++) {
			int index = i;
			limits.get(i).forEach((property, value) -> args.put("limits[" + index + "]." + property, value));
		}
		return RouteArgs.parseLimits("override for", target, "", args);
	}

	/** The names of the declared plans. */
	public Set<String> plans() {
		return this.plans.keySet();
	}

	/** Each declared plan's limits, by plan name: for operators. */
	public Map<String, List<RouteLimit>> planLimits() {
		return Collections.unmodifiableMap(this.plans);
	}

	/** Every scope some route names (under any plan), with those routes in order: for operators. */
	public Map<String, List<String>> scopes() {
		Map<String, List<String>> scopes = new TreeMap<>();
		new TreeMap<>(this.routes).forEach((routeId, route) -> route.scopes
			.forEach(scope -> scopes.computeIfAbsent(scope, name -> new ArrayList<>()).add(routeId)));
		return scopes;
	}

	/**
	 * Compiles a route's arguments, checks its scopes against every other route's and keeps it.
	 * @return whether the route's policy is new or changed
	 * @throws InvalidRouteConfigurationException if the route is wrong; the route's previous policy stays
	 */
	public synchronized boolean put(String routeId, Map<String, ?> args) {
		return put(routeId, args, SlotRelease.NEVER);
	}

	/**
	 * As {@link #put(String, Map)}, for an adapter that may or may not give back a concurrency limit's slot
	 * when each response ends: only the {@code WindowRateLimit} filter sees that end. The compiled route says
	 * whether it does ({@link CompiledRoute#releasesSlots}).
	 * @throws InvalidRouteConfigurationException also when the route's limits (or a plan's) count concurrency
	 * and its adapter releases no slot
	 */
	public synchronized boolean put(String routeId, Map<String, ?> args, SlotRelease release) {
		CompiledRoute route = compile(routeId, args, release);
		if (release == SlotRelease.NEVER) {
			checkNoConcurrency(routeId, route, args);
		}
		this.routes.forEach((otherId, other) -> {
			if (!otherId.equals(routeId)) {
				checkScopes(routeId, route, otherId, other);
			}
		});
		CompiledRoute previous = this.routes.put(routeId, route);
		return previous == null || !previous.policy.equals(route.policy) || !previous.lists.equals(route.lists);
	}

	/**
	 * Forgets every route not among {@code routeIds}, e.g. those deleted at run time, so that they leave the
	 * endpoint and stop pinning the limits of the scopes they named.
	 * @return the routes forgotten
	 */
	public synchronized Set<String> retain(Set<String> routeIds) {
		Set<String> gone = new java.util.TreeSet<>(this.routes.keySet());
		gone.removeAll(routeIds);
		gone.remove(DEFAULT_FILTERS);
		// a filter's own policy, <route id>@<filter id>, stays with its route
		gone.removeIf(id -> id.lastIndexOf(FILTER_SEPARATOR) > 0
				&& routeIds.contains(id.substring(0, id.lastIndexOf(FILTER_SEPARATOR))));
		this.routes.keySet().removeAll(gone);
		return gone;
	}

	/**
	 * Checks routes together, as start-up does: each route, and every scope across them.
	 * @param routes each route's limiter arguments by route id
	 */
	public void check(Map<String, ? extends Map<String, ?>> routes) {
		check(routes, Set.of());
	}

	/**
	 * As {@link #check(Map)}, where the routes (or filters' policies) named in {@code releasingSlots} are
	 * decided by an adapter that releases concurrency slots (the {@code WindowRateLimit} filter).
	 */
	public void check(Map<String, ? extends Map<String, ?>> routes, Set<String> releasingSlots) {
		PolicyRegistry scratch = new PolicyRegistry(this);
		routes.forEach((routeId, args) -> scratch.put(routeId, args,
				releasingSlots.contains(routeId) ? SlotRelease.IF_COUNTED : SlotRelease.NEVER));
	}

	private static final String ONLY_RELEASING = "algorithm concurrency only on the WindowRateLimit filter (WebFlux), "
			+ "which gives each slot back when the response ends; this route's adapter (the RequestRateLimiter filter, "
			+ "Server MVC) cannot see that end, so slots would stay taken for their whole window";

	/** A route whose adapter releases no slot may not count concurrency, by its own limits or a plan's. */
	private void checkNoConcurrency(String routeId, CompiledRoute route, Map<String, ?> args) {
		RoutePolicy policy = route.policy;
		if (!policy.usesPlans()) {
			int index = concurrencyIndex(policy.limits());
			if (index >= 0) {
				boolean single = args.keySet().stream().noneMatch(key -> key.startsWith(RouteArgs.PREFIX + "limits"));
				throw new InvalidRouteConfigurationException(routeId,
						RouteArgs.PREFIX + (single ? "" : "limits[" + index + "].") + "algorithm", "is 'concurrency'",
						ONLY_RELEASING);
			}
			return;
		}
		this.plans.forEach((plan, limits) -> {
			int index = concurrencyIndex(limits);
			if (index >= 0) {
				throw new InvalidRouteConfigurationException(routeId, RouteArgs.PREFIX + "plan",
						"is '" + policy.plan() + "' and plan '" + plan + "' (which this route's clients may be on) has limit '"
								+ limits.get(index).name() + "' of algorithm concurrency",
						ONLY_RELEASING + "; give this route plans without concurrency, or move it to WindowRateLimit");
			}
		});
	}

	/** Whether the route's adapter releases slots; a route without limits of its own is the default filters'. */
	private boolean releasesSlots(String routeId) {
		CompiledRoute route = this.routes.containsKey(routeId) ? this.routes.get(routeId) : this.routes.get(DEFAULT_FILTERS);
		return route != null && route.releasesSlots;
	}

	/** The position of the first concurrency limit, or -1. */
	private static int concurrencyIndex(List<RouteLimit> limits) {
		for (int i = 0; i < limits.size(); i++) {
			if (limits.get(i).policy().algorithm().countsRequests()) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * An override with a concurrency limit only applies on routes whose adapter releases slots.
	 * @param target the route or scope the override is for, named in the message
	 * @param routeId a route the override applies on
	 * @throws InvalidRouteConfigurationException naming {@code limits[i].algorithm}, if it would apply elsewhere
	 */
	public void checkOverrideReleased(String target, String routeId, List<RouteLimit> limits) {
		int index = concurrencyIndex(limits);
		if (index >= 0 && !releasesSlots(routeId)) {
			throw new InvalidRouteConfigurationException("override for", target, "limits[" + index + "].algorithm",
					"is 'concurrency' on route '" + routeId + "'", ONLY_RELEASING);
		}
	}

	/** Every route's policy, by route id: for operators. */
	public Map<String, RoutePolicy> policies() {
		Map<String, RoutePolicy> policies = new TreeMap<>();
		this.routes.forEach((routeId, route) -> policies.put(routeId, route.policy));
		return policies;
	}

	/** The route's compiled limits; null when it has none of its own. */
	public @Nullable CompiledRoute route(String routeId) {
		return this.routes.get(routeId);
	}

	/** An override made on the route with its limits named as given; see the other {@code override}. */
	public @Nullable CompiledPolicy override(String routeId, CompiledRoute route, List<RouteLimit> limits) {
		return override(routeId, route, limits, false);
	}

	/**
	 * An override made on the route, as the route decides it, compiled on first use: its limits replace the
	 * route's. A single limit given no name takes the name of the route's first limit. Null when a request
	 * of the route's cost cannot fit them (an override written before this check, or by hand): the caller
	 * falls back to the client's plan or the route's default rather than refuse the client for good; so it
	 * does when the route holds (max-delay) and a limit cannot reserve a later slot.
	 */
	public @Nullable CompiledPolicy override(String routeId, CompiledRoute route, List<RouteLimit> limits, boolean unnamed) {
		if (RouteArgs.indexTooSmallFor(route.policy.cost(), limits) >= 0
				|| MaxDelay.indexNotHolding(route.policy.maxDelay(), limits) >= 0
				|| (!releasesSlots(routeId) && concurrencyIndex(limits) >= 0)) {
			return null;
		}
		return route.override(List.of(limits, unnamed), key -> {
			List<RouteLimit> own = unnamed ? renamed(limits, route.byDefault.limits.get(0).name()) : limits;
			return compile(routeId, OVERRIDE, route.policy, withScope(own, route.policy.scope()));
		});
	}

	/**
	 * An override made on a scope, as a route naming it decides it on top of {@code base} (what the client
	 * has otherwise): its limits count in the scope, so once across every route naming it, and take the
	 * place of the scope's limits only; the route's own limits stay. A single limit given no name takes the
	 * name of the scope's limit it replaces. Null when a request of the route's cost cannot fit them, or the
	 * route holds and one of them cannot reserve a later slot.
	 */
	public @Nullable CompiledPolicy scopeOverride(String routeId, CompiledRoute route, CompiledPolicy base, String scope,
			List<RouteLimit> limits, boolean unnamed) {
		if (RouteArgs.indexTooSmallFor(base.route.cost(), limits) >= 0
				|| MaxDelay.indexNotHolding(base.route.maxDelay(), limits) >= 0
				|| (!releasesSlots(routeId) && concurrencyIndex(limits) >= 0)) {
			return null;
		}
		return route.override(List.of(base.plan, scope, limits, unnamed), key -> {
			List<RouteLimit> replaced = base.scopeLimits(scope);
			List<RouteLimit> own = limits.stream()
				.map(limit -> limit.inScope(scope))
				.toList();
			if (unnamed && !replaced.isEmpty()) {
				own = renamed(own, replaced.get(0).name());
			}
			List<RouteLimit> merged = new ArrayList<>();
			for (RouteLimit limit : base.limits) {
				if (!scope.equals(limit.scope())) {
					merged.add(limit);
				}
				else if (limit == replaced.get(0)) {
					merged.addAll(own);
				}
			}
			if (replaced.isEmpty()) {
				merged.addAll(own);
			}
			return compile(routeId, OVERRIDE, base.route, merged);
		});
	}

	private static List<RouteLimit> renamed(List<RouteLimit> single, String name) {
		RouteLimit limit = single.get(0);
		return List.of(limit.named(name));
	}

	/**
	 * Checks that a request on the route fits an override's limits at once.
	 * @param target the route or scope the override is for, named in the message
	 * @throws InvalidRouteConfigurationException naming {@code limits[i].limit} (or {@code .burst}) and the
	 * cost, if it does not
	 */
	public static void checkOverrideCost(String target, String routeId, RoutePolicy route, List<RouteLimit> limits) {
		RouteArgs.checkOverrideCost(target, routeId, route.cost(), limits);
	}

	private CompiledRoute compile(String routeId, Map<String, ?> args, SlotRelease release) {
		RoutePolicy policy = RouteArgs.parse(routeId, args);
		RouteLists lists = RouteArgs.parseLists(routeId, args);
		if (!policy.usesPlans()) {
			return new CompiledRoute(policy, compile(routeId, OWN, policy, policy.limits()), Map.of(), lists, release);
		}
		if (!this.plans.containsKey(policy.plan())) {
			throw new InvalidRouteConfigurationException(routeId, RouteArgs.PREFIX + "plan",
					"is '" + policy.plan() + "'", this.plans.isEmpty() ? "a plan declared under " + PLANS + ", none is"
							: "one of " + String.join(", ", this.plans.keySet()) + " (declared under " + PLANS + ")");
		}
		if (policy.quotaStatus() != 0 && this.plans.values().stream().noneMatch(CalendarArgs::isQuota)) {
			throw new InvalidRouteConfigurationException(routeId, RouteArgs.PREFIX + "quota-status",
					"is '" + policy.quotaStatus() + "' on a route whose plans have no calendar quota",
					"only where a limit has calendar: day, week or month");
		}
		Map<String, CompiledPolicy> byPlan = new LinkedHashMap<>();
		this.plans.forEach((plan, limits) -> {
			List<RouteLimit> scoped = withScope(limits, policy.scope());
			RouteArgs.checkCost(routeId, policy.cost(), scoped, " of plan '" + plan + "'");
			MaxDelay.checkLimits(routeId, policy.maxDelay(), scoped, " of plan '" + plan + "'");
			byPlan.put(plan, compile(routeId, plan, policy, scoped));
		});
		return new CompiledRoute(policy, byPlan.get(policy.plan()), byPlan, lists, release);
	}

	/** The route's scope is the scope of every limit that names none. */
	private static List<RouteLimit> withScope(List<RouteLimit> limits, @Nullable String scope) {
		if (scope == null) {
			return limits;
		}
		return limits.stream()
			.map(limit -> (limit.scope() != null) ? limit : limit.inScope(scope))
			.toList();
	}

	private CompiledPolicy compile(String routeId, String plan, RoutePolicy policy, List<RouteLimit> limits) {
		return new CompiledPolicy(routeId, plan, policy, limits);
	}

	/** For clients without a plan and on each plan, a scope both routes name must have the same limits. */
	private void checkScopes(String routeId, CompiledRoute route, String otherId, CompiledRoute other) {
		MaxDelay.checkScopes(routeId, route, otherId, other);
		List<String> choices = new ArrayList<>();
		choices.add(OWN);
		choices.addAll(this.plans.keySet());
		for (String choice : choices) {
			CompiledPolicy mine = route.choice(choice);
			CompiledPolicy theirs = other.choice(choice);
			for (String scope : route.scopes) {
				List<RouteLimit> here = mine.scopeLimits(scope);
				List<RouteLimit> there = theirs.scopeLimits(scope);
				if (!here.isEmpty() && !there.isEmpty() && !here.equals(there)) {
					String forWhom = choice.equals(OWN) ? "for clients without a plan"
							: "for clients on plan '" + choice + "'";
					throw new InvalidRouteConfigurationException(routeId, RouteArgs.PREFIX + "scope",
							"'" + scope + "' is " + describe(here) + " here but " + describe(there) + " on route '"
									+ otherId + "' " + forWhom,
							"the same limits wherever a scope is named, for every plan (a route with limits of its own "
									+ "has them for every plan: give it a plan instead)");
				}
			}
		}
	}

	private static String describe(List<RouteLimit> limits) {
		return limits.stream().map(limit -> {
			WindowPolicy policy = limit.policy();
			String burst = (policy.burst() != policy.limit()) ? " burst " + policy.burst() : "";
			return "'" + limit.name() + "' " + policy.limit() + " per " + window(policy.window()) + " " + policy.algorithm()
					+ burst;
		}).collect(Collectors.joining(" + ", "[", "]"));
	}

	private static String window(Duration window) {
		long millis = window.toMillis();
		for (Object[] unit : new Object[][] { { 86_400_000L, "d" }, { 3_600_000L, "h" }, { 60_000L, "m" },
				{ 1_000L, "s" } }) {
			long size = (Long) unit[0];
			if (millis % size == 0) {
				return millis / size + (String) unit[1];
			}
		}
		return millis + "ms";
	}

}
