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
import java.util.function.Predicate;
import java.util.stream.Collectors;

import io.windowlimiter.core.access.RouteLists;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.metering.LlmPrices;
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

	private final LlmPrices prices;

	private final Map<String, CompiledRoute> routes = new ConcurrentHashMap<>();

	/**
	 * @param plans each plan's properties by name, {@code limits[i].limit} and so on, unprefixed
	 * @throws InvalidRouteConfigurationException naming the plan and property, if a plan is wrong
	 */
	public PolicyRegistry(Map<String, ? extends Map<String, ?>> plans) {
		this(plans, LlmPrices.NONE);
	}

	/**
	 * @param plans each plan's properties by name, {@code limits[i].limit} and so on, unprefixed
	 * @param prices what LLM calls cost, for the limits counting money ({@code unit: usd})
	 * @throws InvalidRouteConfigurationException naming the plan and property, if a plan is wrong (a money limit
	 * without a price table too)
	 */
	public PolicyRegistry(Map<String, ? extends Map<String, ?>> plans, LlmPrices prices) {
		this.prices = prices;
		Map<String, List<RouteLimit>> parsed = new TreeMap<>();
		plans.forEach((name, args) -> {
			List<RouteLimit> limits = parsePlan(name, args);
			checkPriced("plan", name, PLANS + "." + name + ".", limits);
			parsed.put(name, limits);
		});
		this.plans = parsed;
	}

	/** A registry with the plans and prices of {@code other} and none of its routes. */
	private PolicyRegistry(PolicyRegistry other) {
		this.plans = other.plans;
		this.prices = other.prices;
	}

	/** What LLM calls cost ({@code window-rate-limiter.llm-prices}): what a money limit counts. */
	public LlmPrices prices() {
		return this.prices;
	}

	/**
	 * A limit counting money prices calls by the table: without one, it would count nothing (or guess), so it
	 * stops start-up naming the limit's unit.
	 */
	private void checkPriced(String kind, String owner, String prefix, List<RouteLimit> limits) {
		for (int i = 0; i < limits.size(); i++) {
			if (limits.get(i).countsMoney() && this.prices.isEmpty()) {
				throw new InvalidRouteConfigurationException(kind, owner, prefix + "limits[" + i + "].unit",
						"is 'usd' and window-rate-limiter.llm-prices prices no model",
						"a price table in USD per million tokens, e.g. window-rate-limiter.llm-prices.[gpt-4o]: "
								+ "{ input: 2.50, output: 10.00 } (and a default entry for every other model), or unit: "
								+ "tokens");
			}
		}
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
		return put(routeId, args, release, false);
	}

	/**
	 * As {@link #put(String, Map, SlotRelease)}, for an adapter that meters the route's LLM calls or not
	 * ({@code llm} on a {@code WindowRateLimit} filter): only on such a route do limits count tokens
	 * ({@code unit: tokens}); on any other, a token limit of the route's own is refused and a plan's left out.
	 * @throws InvalidRouteConfigurationException also when a route that meters tokens uses plans and a plan has
	 * no token limit, or one that does not uses a plan of token limits only
	 */
	public synchronized boolean put(String routeId, Map<String, ?> args, SlotRelease release, boolean metersTokens) {
		CompiledRoute route = compile(routeId, args, release, metersTokens);
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
		check(routes, releasingSlots, Set.of());
	}

	/**
	 * As {@link #check(Map, Set)}, where the routes (or filters' policies) named in {@code meteringTokens} are
	 * decided by an adapter that meters LLM calls ({@code llm}).
	 */
	public void check(Map<String, ? extends Map<String, ?>> routes, Set<String> releasingSlots,
			Set<String> meteringTokens) {
		PolicyRegistry scratch = new PolicyRegistry(this);
		routes.forEach((routeId, args) -> scratch.put(routeId, args,
				releasingSlots.contains(routeId) ? SlotRelease.IF_COUNTED : SlotRelease.NEVER,
				meteringTokens.contains(routeId)));
	}

	private static final String ONLY_RELEASING = "algorithm concurrency only on the WindowRateLimit filter (WebFlux), "
			+ "which gives each slot back when the response ends; this route's filter (Spring Cloud Gateway's "
			+ "RequestRateLimiter, or the Server MVC filter) cannot see that end, so slots would stay taken for their whole window";

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

	/**
	 * An override's token limits count only on routes that meter LLM calls ({@code llm}): an override with one,
	 * made on a route that meters none or on a scope none of whose routes does, would change nothing there.
	 * @param target the route or scope the override is for, named in the message
	 * @param routeIds the routes it applies on
	 * @throws InvalidRouteConfigurationException naming {@code limits[i].unit}, if no route meters tokens
	 */
	public void checkOverrideTokens(String target, List<String> routeIds, List<RouteLimit> limits) {
		int index = -1;
		for (int i = 0; i < limits.size() && index < 0; i++) {
			index = (limits.get(i).countsTokens() || limits.get(i).countsMoney()) ? i : -1;
		}
		if (index < 0 || routeIds.stream().map(this::routeOrDefault).anyMatch(route -> route != null && route.metersTokens)) {
			return;
		}
		String where = (routeIds.size() == 1 && routeIds.get(0).equals(target)) ? "route '" + target + "', which"
				: "scope '" + target + "', none of whose routes (" + String.join(", ", routeIds) + ")";
		throw new InvalidRouteConfigurationException("override for", target, "limits[" + index + "].unit",
				"is '" + limits.get(index).unit().id() + "' on " + where + " meters LLM calls",
				"unit: requests (the default) here; a token limit on a route with llm (a WindowRateLimit filter "
						+ "metering LLM calls), or a scope such a route names");
	}

	private @Nullable CompiledRoute routeOrDefault(String routeId) {
		return this.routes.containsKey(routeId) ? this.routes.get(routeId) : this.routes.get(DEFAULT_FILTERS);
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

	/** An override made on the route with its limits named as given, each of the algorithm it names; see the other {@code override}. */
	public @Nullable CompiledPolicy override(String routeId, CompiledRoute route, List<RouteLimit> limits) {
		return override(routeId, route, route.byDefault, limits, false, Set.of());
	}

	/**
	 * An override made on the route, as the route decides it, compiled on first use: its limits replace the
	 * route's. On a route that meters tokens (an LLM route), they replace only those of {@code base} (the
	 * client's plan, or the route's default) of the kinds the override names: a token limit the token limits,
	 * a request limit the request limits, a concurrency limit the concurrency limits; the others stay. Elsewhere
	 * they replace all of the route's limits, and a token limit among them is left out. A single limit given no
	 * name takes the name of the first limit it replaces; a limit that names no algorithm, the algorithm of the
	 * limit whose key it takes ({@code replaced}). Null when a request of the route's cost cannot fit
	 * them (an override written before this check, or by hand): the caller falls back to the client's plan or
	 * the route's default rather than refuse the client for good; so it does when the route holds (max-delay)
	 * and a limit cannot reserve a later slot, and when nothing is left of it here.
	 * @param keepsAlgorithm the positions of the override's limits that name no algorithm
	 */
	public @Nullable CompiledPolicy override(String routeId, CompiledRoute route, CompiledPolicy base,
			List<RouteLimit> limits, boolean unnamed, Set<Integer> keepsAlgorithm) {
		// where it replaces all limits, the same override is the same policy whatever the client's plan
		CompiledPolicy from = route.metersTokens ? base : route.byDefault;
		Object key = route.metersTokens ? List.of(base.plan, limits, unnamed, keepsAlgorithm)
				: List.of(limits, unnamed, keepsAlgorithm);
		return route.override(key, ignored -> {
			Replacement replacement = replacement(from.limits, limit -> true, countedHere(route, limits, keepsAlgorithm),
					route.policy.scope(), route.metersTokens, unnamed, routeId);
			List<RouteLimit> own = replacement.own();
			if (own.isEmpty() || !fits(routeId, route.policy, own)) {
				return null;
			}
			return compile(routeId, OVERRIDE, route.policy, replacement.limits());
		});
	}

	/**
	 * An override made on a scope, as a route naming it decides it on top of {@code base} (what the client
	 * has otherwise): its limits count in the scope, so once across every route naming it, and take the
	 * place of the scope's limits only (on a route that meters tokens, of those of the kinds it names); the
	 * route's own limits stay. A single limit given no name takes the name of the scope's limit it replaces; a
	 * limit that names no algorithm, the algorithm of the limit whose key it takes.
	 * On a route that meters no tokens its token limits are left out, and one of token limits only changes
	 * nothing there ({@code base}). Null when a request of the route's cost cannot fit them, or the route holds
	 * and one of them cannot reserve a later slot.
	 * @param keepsAlgorithm the positions of the override's limits that name no algorithm
	 */
	public @Nullable CompiledPolicy scopeOverride(String routeId, CompiledRoute route, CompiledPolicy base, String scope,
			List<RouteLimit> limits, boolean unnamed, Set<Integer> keepsAlgorithm) {
		Counted counted = countedHere(route, limits, keepsAlgorithm);
		if (counted.limits().isEmpty()) {
			return base;
		}
		return route.override(List.of(base.plan, scope, limits, unnamed, keepsAlgorithm), key -> {
			Replacement replacement = scopeReplacement(base, scope, counted, route.metersTokens, unnamed);
			if (!fits(routeId, base.route, replacement.own())) {
				return null;
			}
			return compile(routeId, OVERRIDE, base.route, replacement.limits());
		});
	}

	private static Replacement scopeReplacement(CompiledPolicy base, String scope, Counted counted, boolean byKind,
			boolean unnamed) {
		Counted inScope = new Counted(counted.limits().stream().map(limit -> limit.inScope(scope)).toList(),
				counted.keepsAlgorithm(), counted.indices());
		return replacement(base.limits, limit -> scope.equals(limit.scope()), inScope, null, byKind, unnamed, scope);
	}

	/**
	 * An override's limits that count on a route, each with whether it names no algorithm: on a route that
	 * meters no tokens, its token limits are left out.
	 */
	private record Counted(List<RouteLimit> limits, List<Boolean> keepsAlgorithm, List<Integer> indices) {
	}

	private static Counted countedHere(CompiledRoute route, List<RouteLimit> limits, Set<Integer> keepsAlgorithm) {
		List<RouteLimit> counted = new ArrayList<>();
		List<Boolean> keeps = new ArrayList<>();
		List<Integer> indices = new ArrayList<>();
		for (int i = 0; i < limits.size(); i++) {
			if (route.metersTokens || !limits.get(i).needsLlm()) {
				counted.add(limits.get(i));
				keeps.add(keepsAlgorithm.contains(i));
				indices.add(i);
			}
		}
		return new Counted(counted, keeps, indices);
	}

	/**
	 * An override's limit that names no algorithm counts by the algorithm of the limit it replaces, in its keys, so
	 * the client's count goes on: refused when that algorithm cannot count the limit given. (One that names another
	 * algorithm counts in keys of its own, from zero: the operator chose it.) Checked on every policy the override
	 * may replace limits of on the route: the route's own, or each plan's.
	 * @param target the route or scope the override is for, named in the message
	 * @param routeId a route the override applies on
	 * @param keepsAlgorithm the positions of the override's limits that name no algorithm
	 * @throws InvalidRouteConfigurationException naming {@code limits[i].limit} when the replaced limit's algorithm
	 * cannot count a limit that names none (a sliding log above its most)
	 */
	public void checkOverrideAlgorithms(String target, String routeId, CompiledRoute route, List<RouteLimit> limits,
			Set<Integer> keepsAlgorithm) {
		Counted counted = countedHere(route, limits, keepsAlgorithm);
		if (counted.limits().isEmpty()) {
			return;
		}
		boolean onScope = !target.equals(routeId);
		Set<CompiledPolicy> bases = new java.util.LinkedHashSet<>();
		bases.add(route.byDefault);
		if (onScope || route.metersTokens) {
			this.plans.keySet().forEach(plan -> bases.add(route.choice(plan)));
		}
		for (CompiledPolicy base : bases) {
			Replacement replacement = onScope ? scopeReplacement(base, target, counted, route.metersTokens, false)
					: replacement(base.limits, limit -> true, counted, route.policy.scope(), route.metersTokens, false,
							routeId);
			for (int k = 0; k < replacement.own().size(); k++) {
				RouteLimit replaced = replacement.replaced().get(k);
				Algorithm algorithm = replacement.own().get(k).policy().algorithm();
				if (replaced == null || replaced.policy().algorithm() == algorithm) {
					continue;
				}
				Algorithm theirs = replaced.policy().algorithm();
				String whose = (base.plan.equals(OWN) ? "" : "plan '" + base.plan + "''s ") + "limit '" + replaced.name()
						+ "' on route '" + routeId + "'";
				int index = counted.indices().get(k);
				if (!counted.keepsAlgorithm().get(k)) {
					// named by the operator: it counts in keys of its own, from zero (docs/plans-and-scopes.md says so)
					continue;
				}
				RouteLimit given = counted.limits().get(k);
				throw new InvalidRouteConfigurationException("override for", target, "limits[" + index + "].limit",
						"is '" + given.policy().limit() + "' per " + given.policy().window() + ", which " + theirs
								+ " (the algorithm of the " + whose + ", which it counts by) cannot count",
						"a limit " + theirs + " counts (see the route's limits)");
			}
		}
	}

	/** Whether a request of the route's cost fits the limits at once, and the route may hold (or release) with them. */
	private boolean fits(String routeId, RoutePolicy route, List<RouteLimit> limits) {
		return RouteArgs.indexTooSmallFor(route.cost(), limits) < 0
				&& MaxDelay.indexNotHolding(route.maxDelay(), limits) < 0
				&& (releasesSlots(routeId) || concurrencyIndex(limits) < 0);
	}

	/**
	 * An override in place on a policy.
	 * @param limits the policy's limits with the override's in place of those it replaces
	 * @param own the override's limits as they count there (named, scoped, of the algorithm they count by)
	 * @param replaced for each of {@code own}, the limit of the policy whose key it takes; null where it takes
	 * none (a limit the policy did not have)
	 */
	private record Replacement(List<RouteLimit> limits, List<RouteLimit> own, List<@Nullable RouteLimit> replaced) {
	}

	/**
	 * The limits of {@code base} with the override's in place of those it replaces, in the base's order (the
	 * override's where the first it replaces was, else after the rest): of the targeted limits, all of them, or
	 * {@code byKind} those of the kinds the override names. Keys follow a limit's place among its route's (or
	 * scope's) limits of its unit, so a replacement keeps the keys of what it replaces, and what the client used,
	 * when it counts by the same algorithm: an override's limit that names no algorithm takes the algorithm of the
	 * replaced limit at its place (of its kind), else an operator's change would count from zero in another key.
	 * @param scope the route's scope, given to each of the override's limits that names none; null for none
	 * @param owner the route or scope named in the name of a single unnamed limit that replaces none
	 */
	private static Replacement replacement(List<RouteLimit> base, Predicate<RouteLimit> targeted, Counted counted,
			@Nullable String scope, boolean byKind, boolean unnamed, String owner) {
		List<RouteLimit> own = withScope(counted.limits(), scope);
		// a kind is of a model too: an override of gpt-4o*'s tokens replaces that limit, not the tokens of every model
		Set<String> kinds = own.stream().map(PolicyRegistry::kindOf).collect(Collectors.toSet());
		List<RouteLimit> merged = new ArrayList<>();
		List<RouteLimit> replaced = new ArrayList<>();
		int[] basePlaces = CompiledPolicy.keyPlaces(base);
		List<Integer> replacedPlaces = new ArrayList<>();
		RouteLimit first = null;
		for (int i = 0; i < base.size(); i++) {
			RouteLimit limit = base.get(i);
			boolean replace = targeted.test(limit) && (!byKind || kinds.contains(kindOf(limit)));
			if (!replace) {
				merged.add(limit);
				continue;
			}
			replaced.add(limit);
			replacedPlaces.add(basePlaces[i]);
			if (first == null) {
				first = limit;
				merged.add(null);
			}
		}
		List<RouteLimit> named = own;
		if (unnamed && (first != null || byKind)) {
			// RateLimit-Policy keeps naming the limit replaced; one replacing none is named for what it counts
			String name = (first != null) ? first.name() : owner + "-" + own.get(0).kind().name().toLowerCase().replace('_', '-');
			named = renamed(own, name);
		}
		int at = merged.indexOf(null);
		if (at < 0) {
			at = merged.size();
		}
		else {
			merged.remove(at);
		}
		merged.addAll(at, named);
		int[] places = CompiledPolicy.keyPlaces(merged);
		List<RouteLimit> result = new ArrayList<>();
		List<@Nullable RouteLimit> counterparts = new ArrayList<>();
		for (int k = 0; k < named.size(); k++) {
			RouteLimit limit = named.get(k);
			RouteLimit counterpart = null;
			for (int j = 0; j < replaced.size() && counterpart == null; j++) {
				RouteLimit candidate = replaced.get(j);
				boolean sameKey = candidate.kind() == limit.kind()
						&& CompiledPolicy.keyGroup(candidate).equals(CompiledPolicy.keyGroup(limit))
						&& replacedPlaces.get(j) == places[at + k];
				counterpart = sameKey ? candidate : null;
			}
			counterparts.add(counterpart);
			RouteLimit applied = (counterpart != null && counted.keepsAlgorithm().get(k))
					? withAlgorithmOf(limit, counterpart) : limit;
			merged.set(at + k, applied);
			result.add(applied);
		}
		return new Replacement(merged, result, counterparts);
	}

	/** What an override replaces by: what a limit counts, and of which models. */
	private static String kindOf(RouteLimit limit) {
		return limit.kind() + ((limit.model() != null) ? "\n" + limit.model() : "");
	}

	/**
	 * The limit counted by the algorithm (and log storage) of {@code replaced}, its limit and window kept; as it is
	 * when that algorithm cannot count it (a limit above a sliding log's most, read back from Redis where it was
	 * written before this was checked): counted by the algorithm it was parsed with, from zero.
	 */
	private static RouteLimit withAlgorithmOf(RouteLimit limit, RouteLimit replaced) {
		Algorithm algorithm = replaced.policy().algorithm();
		if (algorithm == limit.policy().algorithm()) {
			return limit;
		}
		try {
			WindowPolicy policy = new WindowPolicy(algorithm, limit.policy().limit(), limit.policy().window());
			return limit.withPolicy(policy);
		}
		catch (IllegalArgumentException ex) {
			return limit;
		}
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

	private CompiledRoute compile(String routeId, Map<String, ?> args, SlotRelease release, boolean metersTokens) {
		RoutePolicy policy = RouteArgs.parse(routeId, args);
		RouteLists lists = RouteArgs.parseLists(routeId, args);
		LeaseArgs.checkNotMetered(routeId, policy.lease(), metersTokens);
		if (!policy.usesPlans()) {
			checkTokensMetered(routeId, policy.limits(), args, metersTokens);
			checkPriced("route", routeId, RouteArgs.PREFIX, policy.limits());
			checkSomeLimitOfEveryModel(routeId, policy.limits(), RouteArgs.PREFIX + "limits[i].model", "");
			return new CompiledRoute(policy, compile(routeId, OWN, policy, policy.limits()), Map.of(), lists, release,
					metersTokens);
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
			List<RouteLimit> scoped = withScope(countedOn(routeId, policy, plan, limits, metersTokens), policy.scope());
			RouteArgs.checkCost(routeId, policy.cost(), scoped, " of plan '" + plan + "'");
			checkSomeLimitOfEveryModel(routeId, scoped, PLANS + "." + plan + ".limits[i].model", " of plan '" + plan + "'");
			MaxDelay.checkLimits(routeId, policy.maxDelay(), scoped, " of plan '" + plan + "'");
			LeaseArgs.checkLimits(routeId, policy.lease(), scoped, " of plan '" + plan + "'");
			byPlan.put(plan, compile(routeId, plan, policy, scoped));
		});
		return new CompiledRoute(policy, byPlan.get(policy.plan()), byPlan, lists, release, metersTokens);
	}

	/**
	 * Some limit of a policy counts every call: a call naming a model no limit's {@code model} matches (or none)
	 * would else be counted by nothing, and pass unlimited.
	 */
	private static void checkSomeLimitOfEveryModel(String routeId, List<RouteLimit> limits, String property,
			String where) {
		if (!limits.isEmpty() && limits.stream().allMatch(limit -> limit.model() != null)) {
			throw new InvalidRouteConfigurationException(routeId, property, "is set on every limit" + where,
					"at least one limit without model, which counts the calls of every model (those of a model no "
							+ "limit names would else pass unlimited)");
		}
	}

	/**
	 * A route's own token limit counts only where its adapter meters LLM calls: elsewhere (the
	 * {@code RequestRateLimiter} filter, a {@code WindowRateLimit} filter without {@code llm}) it would count
	 * each request as one token, silently.
	 */
	private static void checkTokensMetered(String routeId, List<RouteLimit> limits, Map<String, ?> args,
			boolean metersTokens) {
		for (int i = 0; i < limits.size() && !metersTokens; i++) {
			if (limits.get(i).countsTokens() || limits.get(i).countsMoney()) {
				boolean single = args.keySet().stream().noneMatch(key -> key.startsWith(RouteArgs.PREFIX + "limits"));
				throw new InvalidRouteConfigurationException(routeId,
						RouteArgs.PREFIX + (single ? "" : "limits[" + i + "].") + "unit", "is '" + limits.get(i).unit().id()
								+ "' on a route that meters no LLM calls",
						"llm: openai or llm: anthropic on a WindowRateLimit filter, which reads the tokens of each call; "
								+ "or unit: requests");
			}
			if (limits.get(i).model() != null) {
				boolean single = args.keySet().stream().noneMatch(key -> key.startsWith(RouteArgs.PREFIX + "limits"));
				throw new InvalidRouteConfigurationException(routeId,
						RouteArgs.PREFIX + (single ? "" : "limits[" + i + "].") + "model", "is '" + limits.get(i).model()
								+ "' on a route that meters no LLM calls",
						"llm: openai or llm: anthropic on a WindowRateLimit filter, which reads the model each call "
								+ "names; or no model");
			}
		}
	}

	/**
	 * A plan's limits as they count on the route: all of them where the route meters LLM calls, which needs a
	 * token limit in every plan (a client on a plan without would have no token budget there); elsewhere
	 * without its token limits, which count on LLM routes only, and some limit must be left.
	 */
	private static List<RouteLimit> countedOn(String routeId, RoutePolicy route, String plan, List<RouteLimit> limits,
			boolean metersTokens) {
		// a budget in money meters the call as a token budget does
		boolean tokens = limits.stream().anyMatch(limit -> limit.countsTokens() || limit.countsMoney());
		String which = "is '" + route.plan() + "' and plan '" + plan + "' (which this route's clients may be on)";
		if (metersTokens && !tokens) {
			throw new InvalidRouteConfigurationException(routeId, RouteArgs.PREFIX + "plan",
					which + " has no limit counting tokens, on a route that meters LLM calls (llm)",
					"a token limit in every plan of an LLM route, e.g. " + PLANS + "." + plan
							+ ".limits[i]: { limit: 100000, window: 1m, unit: tokens }");
		}
		if (metersTokens || limits.stream().noneMatch(RouteLimit::needsLlm)) {
			return limits;
		}
		List<RouteLimit> requests = limits.stream().filter(limit -> !limit.needsLlm()).toList();
		if (requests.isEmpty()) {
			throw new InvalidRouteConfigurationException(routeId, RouteArgs.PREFIX + "plan",
					which + " has only limits counting tokens, on a route that meters no LLM calls",
					"a limit of requests in plan '" + plan + "' too (its token limits count on LLM routes only), or llm "
							+ "on this route's WindowRateLimit filter");
		}
		return requests;
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
			// a route that meters no LLM calls counts no tokens in a scope: only the limits both count must agree
			boolean tokens = route.metersTokens && other.metersTokens;
			for (String scope : route.scopes) {
				List<RouteLimit> here = counted(mine.scopeLimits(scope), tokens);
				List<RouteLimit> there = counted(theirs.scopeLimits(scope), tokens);
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

	private static List<RouteLimit> counted(List<RouteLimit> limits, boolean tokens) {
		return tokens ? limits : limits.stream().filter(limit -> !limit.needsLlm()).toList();
	}

	private static String describe(List<RouteLimit> limits) {
		return limits.stream().map(limit -> {
			WindowPolicy policy = limit.policy();
			String burst = (policy.burst() != policy.limit()) ? " burst " + policy.burst() : "";
			return "'" + limit.name() + "' " + (limit.countsMoney() ? "$" + LlmPrices.dollars(policy.limit())
					: policy.limit() + (limit.countsTokens() ? " tokens" : "")) + " per "
					+ window(policy.window()) + " " + policy.algorithm() + burst
					+ ((limit.model() != null) ? " of model " + limit.model() : "");
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
