package io.windowlimiter.core.policy;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.windowlimiter.core.access.ClientList;
import io.windowlimiter.core.access.RouteLists;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.CalendarPeriod;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.failure.FailMode;
import io.windowlimiter.metering.LlmPrices;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * Reads one route's {@code window-rate-limiter.*} arguments into a {@link RoutePolicy}, and a plan's or
 * an override's {@code limits[i].*} into its limits. Every check is made here, once all arguments are
 * known, and every mistake gets the same kind of message: route (or plan), property, what it was and
 * what is allowed.
 *
 * <p>One limit: {@code algorithm}, {@code limit}, {@code window} (and {@code log-storage} or
 * {@code burst}). Several: {@code limits[i].limit}, {@code limits[i].window}, optionally
 * {@code limits[i].algorithm} (the route's {@code algorithm} is the default), {@code .log-storage},
 * {@code .burst}, {@code .name} and {@code .scope} (the route's {@code scope} is the default). Or, instead
 * of limits, {@code plan}: the route's default plan. For the route: {@code cost}, {@code shadow},
 * {@code fail-mode}, {@code instances}, {@code max-delay} (see {@link MaxDelay}), {@code lease} (see
 * {@link LeaseArgs}), and {@code name} (the
 * policy name of a single limit).
 */
public final class RouteArgs {

	public static final String PREFIX = "window-rate-limiter.";

	/**
	 * Whether the route's client keys are credentials, which the core hashes where they enter it
	 * ({@code io.windowlimiter.core.CredentialRoutes}); read there, checked here.
	 */
	public static final String CREDENTIAL_KEYS = "credential-keys";

	private static final Set<String> LIMIT_PROPERTIES = Set.of("algorithm", "limit", "window", "log-storage",
			"burst", "name", "scope", "calendar", "time-zone", "week-start", "block-for", "unit", "model");

	/**
	 * The properties of one limit, as a route's {@code limits[i]}, a plan's and an override's take them: whatever
	 * binds a plan's limits from the properties must take every one (Boot drops one it lacks without a word).
	 */
	public static Set<String> limitProperties() {
		return LIMIT_PROPERTIES;
	}

	private static final Set<String> ROUTE_PROPERTIES = Set.of("cost", "shadow", "fail-mode", "instances", "plan",
			"quota-status", MaxDelay.PROPERTY, LeaseArgs.PROPERTY, CREDENTIAL_KEYS);

	/**
	 * The route's lists, named as nginx's and Envoy's are, and as the gateway-wide properties: {@code allow}
	 * (never limited) and {@code deny} (always refused), each comma-separated text, or a YAML list, which the
	 * gateway hands over as {@code allow.0}, {@code allow.1} ...
	 */
	private static final Pattern LIST = Pattern.compile("(allow|deny)(?:\\[(\\d+)]|\\.(\\d+))?");

	/** What a route with a plan may not have: the plan gives its limits. */
	private static final List<String> OWN_LIMIT_PROPERTIES = List.of("algorithm", "limit", "window", "log-storage",
			"burst", "name", "calendar", "time-zone", "week-start", "block-for", "unit", "model");

	/** {@code limits[0].limit} as written, or {@code limits.0.limit} as Boot binds it from YAML into a map. */
	private static final Pattern INDEXED = Pattern.compile("limits(?:\\[(\\d+)]|\\.(\\d+))\\.([a-z-]+)");

	/**
	 * The log keeps one entry per request in the window (the ring one per request whatever its cost, the sorted
	 * set one per unit). A fresh key costs about 200 bytes at any limit, but a client that sends this many
	 * requests of cost 1 in a window holds 8 MB in the ring (130 MB as a sorted set), and growing its ring that
	 * far copies 8 MB inside one script (about 65 ms of Redis time measured). The ring's counts need it too
	 * ({@link WindowPolicy#MAX_LOG_LIMIT}).
	 */
	public static final long MAX_LOG_LIMIT = WindowPolicy.MAX_LOG_LIMIT;

	/**
	 * The sorted-set log writes one entry per unit of cost, each a ZADD: tens of microseconds of Redis time a
	 * unit, during which Redis serves nobody else. A request (or a late charge) of 4,000 units took 83 to 296 ms
	 * (docs/settle.md); this bound keeps one request under about a hundred. The ring takes token-sized limits.
	 */
	public static final long MAX_SORTED_SET_LOG_LIMIT = 10_000;

	/** What a limit's {@code unit} may be. */
	public static final String UNITS = "tokens (the limit counts the tokens of LLM calls; needs llm), usd (their price, "
			+ "from window-rate-limiter.llm-prices; needs llm) or requests (the default)";

	private static final String WHOLE_NUMBER = "a whole number from 1 to " + WindowPolicy.MAX_LIMIT;

	/** What is read, for messages: {@code route}, {@code plan} or {@code override for}. */
	private final String kind;

	/** The route's id, the plan's name or the override's target. */
	private final String routeId;

	/** What every property is prefixed with in messages, e.g. {@code window-rate-limiter.plans.free.}. */
	private final String prefix;

	/** Plans and overrides: nothing but {@code limits[i].*}. */
	private final boolean limitsOnly;

	private final Map<String, String> route = new TreeMap<>();

	private final Map<Integer, Map<String, String>> indexed = new TreeMap<>();

	/** {@code allow} and {@code deny} entries, each list's in the order written (indexed entries by index). */
	private final Map<String, Map<String, String>> lists = new TreeMap<>();

	private RouteArgs(String kind, String routeId, String prefix, boolean limitsOnly, Map<String, ?> args) {
		this.kind = kind;
		this.routeId = routeId;
		this.prefix = prefix;
		this.limitsOnly = limitsOnly;
		args.forEach((key, value) -> {
			if (key.startsWith(prefix)) {
				String text = (value != null) ? value.toString().trim() : "";
				put(key.substring(prefix.length()), text);
			}
		});
	}

	/** Whether a filter's arguments configure this limiter at all. */
	public static boolean appliesTo(Map<String, ?> args) {
		return args.keySet().stream().anyMatch(key -> key.startsWith(PREFIX));
	}

	/** The policy the arguments make, or an {@link InvalidRouteConfigurationException}. */
	public static RoutePolicy parse(String routeId, Map<String, ?> args) {
		return new RouteArgs("route", routeId, PREFIX, false, args).policy();
	}

	/**
	 * The limits of a plan or an override, checked by the same rules as a route's.
	 * @param kind for messages: {@code plan} or {@code override for}
	 * @param owner the plan's name, or the override's target
	 * @param prefix what the properties are prefixed with in messages, e.g. {@code window-rate-limiter.plans.free.}
	 * @param args {@code limits[i].*}, unprefixed
	 */
	public static List<RouteLimit> parseLimits(String kind, String owner, String prefix, Map<String, ?> args) {
		Map<String, Object> prefixed = new TreeMap<>();
		args.forEach((key, value) -> prefixed.put(prefix + key, value));
		RouteArgs parsed = new RouteArgs(kind, owner, prefix, true, prefixed);
		if (parsed.indexed.isEmpty()) {
			throw parsed.invalid(prefix + "limits", "is missing", "at least one limit, limits[0].limit and .window");
		}
		return parsed.limits();
	}

	/**
	 * The route's allow and deny lists ({@code window-rate-limiter.allow} and {@code .deny}).
	 * @throws InvalidRouteConfigurationException naming the route, the list and the bad entry
	 */
	public static RouteLists parseLists(String routeId, Map<String, ?> args) {
		RouteArgs parsed = new RouteArgs("route", routeId, PREFIX, false, args);
		ClientList allow = parsed.list("allow");
		ClientList deny = parsed.list("deny");
		String both = allow.sharedWith(deny);
		if (both != null) {
			throw parsed.invalid(PREFIX + "deny", "names '" + both + "', which " + PREFIX + "allow names too",
					"each client in one list at most");
		}
		return new RouteLists(allow, deny);
	}

	private ClientList list(String name) {
		Map<String, String> written = this.lists.get(name);
		if (written == null) {
			return ClientList.EMPTY;
		}
		List<String> entries = new ArrayList<>();
		written.values().forEach(text -> entries.addAll(List.of(text.split(",", -1))));
		try {
			return ClientList.of(entries);
		}
		catch (IllegalArgumentException ex) {
			throw invalid(this.prefix + name, "is '" + String.join(",", written.values()) + "': " + ex.getMessage(),
					ClientList.ALLOWED + ", comma-separated");
		}
	}

	private static final String NEVER_PASSES = ", else no request could ever pass";

	/** A request of this cost must fit every limit at once, else no request could ever pass. */
	public static void checkCost(String routeId, long cost, List<RouteLimit> limits, String where) {
		int index = indexTooSmallFor(cost, limits);
		if (index >= 0) {
			throw new InvalidRouteConfigurationException(routeId, PREFIX + "cost",
					"is '" + cost + "', more than limit '" + limits.get(index).name() + "'" + where + " allows at once",
					"at most the smallest limit (and burst)" + NEVER_PASSES);
		}
	}

	/**
	 * An override's limits must each fit a request of the route's cost at once, as a route's own limits
	 * must; the message names the override's {@code limits[i].limit} (or {@code .burst}) and the cost.
	 * @param target the route or scope the override is for
	 * @param routeId a route the override applies on
	 */
	public static void checkOverrideCost(String target, String routeId, long cost, List<RouteLimit> limits) {
		int index = indexTooSmallFor(cost, limits);
		if (index >= 0) {
			WindowPolicy policy = limits.get(index).policy();
			boolean limit = cost > policy.limit();
			throw new InvalidRouteConfigurationException("override for", target,
					"limits[" + index + "]." + (limit ? "limit" : "burst"),
					"is '" + (limit ? policy.limit() : policy.burst()) + "', less than the cost '" + cost
							+ "' of a request on route '" + routeId + "'",
					"at least the cost of a request on every route it applies on" + NEVER_PASSES);
		}
	}

	/**
	 * The position of the first limit a request of this cost cannot fit at once; -1 when all fit. A token limit
	 * takes an LLM call's token estimate instead, capped so that it fits.
	 */
	public static int indexTooSmallFor(long cost, List<RouteLimit> limits) {
		for (int i = 0; i < limits.size(); i++) {
			WindowPolicy policy = limits.get(i).policy();
			// a concurrency limit counts a request as one slot, whatever it costs
			if (!policy.algorithm().countsRequests() && !limits.get(i).countsTokens()
					&& (cost > policy.limit() || cost > policy.burst())) {
				return i;
			}
		}
		return -1;
	}

	private void put(String property, String value) {
		Matcher matcher = INDEXED.matcher(property);
		Matcher list = LIST.matcher(property);
		if (!this.limitsOnly && list.matches()) {
			String index = (list.group(2) != null) ? list.group(2) : (list.group(3) != null) ? list.group(3) : "";
			// "" sorts first: a comma-separated value, then YAML list entries by index
			this.lists.computeIfAbsent(list.group(1), name -> new TreeMap<>())
				.put(index.isEmpty() ? "" : String.format("%09d", Integer.parseInt(index)), value);
		}
		else if (matcher.matches() && LIMIT_PROPERTIES.contains(matcher.group(3))) {
			String index = (matcher.group(1) != null) ? matcher.group(1) : matcher.group(2);
			this.indexed.computeIfAbsent(Integer.parseInt(index), i -> new TreeMap<>()).put(matcher.group(3), value);
		}
		else if (!this.limitsOnly && (LIMIT_PROPERTIES.contains(property) || ROUTE_PROPERTIES.contains(property))) {
			this.route.put(property, value);
		}
		else if (this.limitsOnly) {
			throw invalid(this.prefix + property, "is not a known property",
					"limits[i].<one of algorithm, limit, window, log-storage, burst, name, scope, calendar, time-zone, "
							+ "week-start, block-for, unit, model> (each prefixed "
							+ this.prefix + ")");
		}
		else {
			throw invalid(this.prefix + property, "is not a known property",
					"algorithm, limit, window, log-storage, burst, name, scope, calendar, time-zone, week-start, "
							+ "block-for, unit, model, limits[i].<one of those>, plan, cost, shadow, fail-mode, instances, quota-status, "
							+ "allow, deny, max-delay, lease, credential-keys (each prefixed " + PREFIX + ")");
		}
	}

	private RoutePolicy policy() {
		String scope = scope("scope", this.route.get("scope"));
		String plan = this.route.get("plan");
		List<RouteLimit> limits = List.of();
		long cost = number("cost", this.route.getOrDefault("cost", "1"), WindowPolicy.MAX_LIMIT, WHOLE_NUMBER);
		Duration maxDelay = MaxDelay.parse(this.routeId, this.route.get(MaxDelay.PROPERTY));
		Duration lease = LeaseArgs.parse(this.routeId, this.route.get(LeaseArgs.PROPERTY));
		if (plan != null) {
			if (plan.isEmpty()) {
				throw invalid(this.prefix + "plan", "is empty", "the name of a plan under " + PREFIX + "plans");
			}
			for (String own : OWN_LIMIT_PROPERTIES) {
				if (this.route.containsKey(own)) {
					throw invalid(this.prefix + own, "is set beside " + PREFIX + "plan",
							"either a plan (which gives the limits) or limits of the route's own, not both");
				}
			}
			if (!this.indexed.isEmpty()) {
				throw invalid(this.prefix + "limits[...]", "is set beside " + PREFIX + "plan",
						"either a plan (which gives the limits) or limits of the route's own, not both");
			}
		}
		else {
			limits = limits();
			checkCost(this.routeId, cost, limits, "");
			MaxDelay.checkLimits(this.routeId, maxDelay, limits, "");
			LeaseArgs.checkLimits(this.routeId, lease, limits, "");
		}
		int quotaStatus = CalendarArgs.quotaStatus(this.route.get("quota-status"), limits, plan != null,
				(property, what, allowed) -> invalid(this.prefix + property, what, allowed));
		boolean shadow = shadow();
		MaxDelay.checkNotShadow(this.routeId, maxDelay, shadow);
		LeaseArgs.checkRoute(this.routeId, lease, shadow, maxDelay);
		String credentials = this.route.getOrDefault(CREDENTIAL_KEYS, "false");
		if (!credentials.equals("true") && !credentials.equals("false")) {
			throw invalid(this.prefix + CREDENTIAL_KEYS, "is '" + credentials + "'", "true (the route's client keys are "
					+ "credentials, hashed before anything keeps or shows them) or false");
		}
		return new RoutePolicy(limits, cost, shadow, failMode(), (int) number("instances",
				this.route.getOrDefault("instances", "1"), RoutePolicy.MAX_INSTANCES,
				"a whole number from 1 to " + RoutePolicy.MAX_INSTANCES), plan, scope, quotaStatus, maxDelay, lease);
	}

	private List<RouteLimit> limits() {
		List<RouteLimit> limits = new ArrayList<>();
		String routeScope = this.route.get("scope");
		if (this.indexed.isEmpty()) {
			String scope = scope("scope", routeScope);
			String name = this.route.getOrDefault("name", (scope != null) ? scope : this.routeId);
			limits.add(limit("", this.route, name, scope));
		}
		else {
			for (String single : List.of("limit", "window", "log-storage", "burst", "name", "calendar", "time-zone",
					"week-start", "unit", "model")) {
				if (this.route.containsKey(single)) {
					throw invalid(this.prefix + single, "is set beside limits[...]",
							"either one limit (" + PREFIX + "limit, window...) or limits[i].*, not both");
				}
			}
			Map<String, Integer> perScope = new HashMap<>();
			int expected = 0;
			for (Map.Entry<Integer, Map<String, String>> entry : this.indexed.entrySet()) {
				if (entry.getKey() != expected++) {
					throw invalid(this.prefix + "limits[" + entry.getKey() + "]", "skips an index",
							"limits numbered from 0 without gaps");
				}
				Map<String, String> values = new TreeMap<>(entry.getValue());
				values.putIfAbsent("algorithm", this.route.getOrDefault("algorithm", null));
				values.putIfAbsent("scope", routeScope);
				values.putIfAbsent("block-for", this.route.get("block-for"));
				values.values().removeIf(value -> value == null);
				String prefix = "limits[" + entry.getKey() + "].";
				String scope = scope(prefix + "scope", values.get("scope"));
				// a scoped limit is named after its scope by default, so that it reads alike on every route
				String name = (scope == null) ? this.routeId + "-" + entry.getKey()
						: scope + suffix(perScope.merge(scope, 1, Integer::sum) - 1);
				limits.add(limit(prefix, values, values.getOrDefault("name", name), scope));
			}
		}
		Set<String> names = new HashSet<>();
		for (RouteLimit limit : limits) {
			if (!names.add(limit.name())) {
				throw invalid(this.prefix + "limits[...].name", "repeats '" + limit.name() + "'",
						"a name of its own for each limit");
			}
		}
		return limits;
	}

	private static String suffix(int index) {
		return (index == 0) ? "" : "-" + index;
	}

	private @Nullable String scope(String property, @Nullable String scope) {
		if (scope != null && scope.isEmpty()) {
			throw invalid(this.prefix + property, "is empty", "the name of a scope, the same on every route sharing it");
		}
		return scope;
	}

	private RouteLimit limit(String prefix, Map<String, String> values, String name, @Nullable String scope) {
		CalendarArgs.Problem problem = (property, what, allowed) -> invalid(this.prefix + prefix + property, what,
				allowed);
		CalendarPeriod calendar = CalendarArgs.period(values, problem);
		// a calendar quota is a fixed window: the algorithm may be left out
		Algorithm algorithm = algorithm(prefix, values.getOrDefault("algorithm",
				(calendar != null) ? Algorithm.FIXED_WINDOW.id() : Algorithm.SLIDING_WINDOW_COUNTER.id()),
				values.get("log-storage"));
		String limitText = values.get("limit");
		if (limitText == null || limitText.isEmpty()) {
			throw invalid(this.prefix + prefix + "limit", "is missing", WHOLE_NUMBER);
		}
		RouteLimit.Unit unit = unit(prefix, values.get("unit"), algorithm);
		long limit = (unit == RouteLimit.Unit.USD) ? dollars(prefix + "limit", limitText, algorithm)
				: number(prefix + "limit", limitText, WindowPolicy.MAX_LIMIT, WHOLE_NUMBER);
		Duration blockFor = CalendarArgs.blockFor(values.get("block-for"), problem);
		if (algorithm == Algorithm.CONCURRENCY && !blockFor.isZero()) {
			throw invalid(this.prefix + prefix + "block-for", "is '" + values.get("block-for") + "' on a limit of algorithm '"
					+ algorithm.id() + "'" + (this.route.containsKey("block-for") && prefix.startsWith("limits[")
							? " (the route's block-for applies to each of its limits)" : ""),
					"no block-for with concurrency: a slot frees when a response ends; a penalty on the route's other "
							+ "limits goes on each of them (limits[i].block-for)");
		}
		String model = model(prefix, values.get("model"));
		if (calendar != null) {
			CalendarArgs.checkCalendar(algorithm, values, problem);
			if (name.isEmpty()) {
				throw invalid(this.prefix + prefix + "name", "is empty", "a name for the policy, shown to clients");
			}
			return new RouteLimit(name, WindowPolicy.calendar(limit, calendar), scope, blockFor, unit, model);
		}
		Duration window = window(prefix + "window", values.get("window"));
		if (algorithm != Algorithm.FIXED_WINDOW && !WindowPolicy.fitsExactArithmetic(limit, window)) {
			throw invalid(this.prefix + prefix + "limit", "is '" + limitText + "' with a window of '" + values.get("window") + "'",
					"limit * window in milliseconds below 2^53 (about 9e15)" + ((unit == RouteLimit.Unit.USD)
							? ", the limit counted in micro-dollars ($1 is 1,000,000); algorithm: fixed-window (or a "
									+ "calendar quota) has no such bound" : ""));
		}
		if (limit > MAX_LOG_LIMIT && (algorithm == Algorithm.SLIDING_LOG || algorithm == Algorithm.SLIDING_LOG_SORTED_SET)) {
			throw invalid(this.prefix + prefix + "limit", "is '" + limit + "' for " + algorithm.id(),
					"at most " + MAX_LOG_LIMIT + " for the sliding log, which keeps every request of a window "
							+ "(about 8 bytes each in the ring, 130 in a sorted set); use sliding-window-counter "
							+ "or token-bucket above that");
		}
		if (limit > MAX_SORTED_SET_LOG_LIMIT && algorithm == Algorithm.SLIDING_LOG_SORTED_SET) {
			throw invalid(this.prefix + prefix + "limit", "is '" + limit + "' for " + algorithm,
					"at most " + MAX_SORTED_SET_LOG_LIMIT + " with log-storage sorted-set, which writes one entry per "
							+ "unit of cost (a request of thousands blocks Redis for hundreds of ms); use the ring "
							+ "(the default log-storage), sliding-window-counter or token-bucket above that");
		}
		if (algorithm == Algorithm.TOKEN_BUCKET && !WindowPolicy.fitsTokenBucketClock(limit, window)) {
			throw invalid(this.prefix + prefix + "limit", "is '" + limit + "' per '" + values.get("window") + "' for "
					+ algorithm.id() + ", one request every " + (window.toMillis() / (double) limit) + " ms",
					"one request every 0.01 ms or more (limit at most 100 per millisecond of window, "
							+ WindowPolicy.MAX_TOKEN_BUCKET_LIMIT_PER_WINDOW_MILLI * window.toMillis() + " here): the "
							+ "bucket's time is kept in epoch milliseconds, a double, which cannot add shorter "
							+ "intervals exactly; use sliding-window-counter above that");
		}
		long burst = limit;
		if (values.containsKey("burst")) {
			if (algorithm != Algorithm.TOKEN_BUCKET) {
				throw invalid(this.prefix + prefix + "burst", "is '" + values.get("burst") + "'",
						"only with " + Algorithm.TOKEN_BUCKET.id() + ", not " + algorithm.id());
			}
			burst = (unit == RouteLimit.Unit.USD) ? dollars(prefix + "burst", values.get("burst"), algorithm)
					: number(prefix + "burst", values.get("burst"), WindowPolicy.MAX_LIMIT, WHOLE_NUMBER);
		}
		if (name.isEmpty()) {
			throw invalid(this.prefix + prefix + "name", "is empty", "a name for the policy, shown to clients");
		}
		return new RouteLimit(name, new WindowPolicy(algorithm, limit, window, burst), scope, blockFor, unit, model);
	}

	/** The longest {@code model} taken: model names run to a few dozen characters. */
	static final int MAX_MODEL_LENGTH = 200;

	/**
	 * A limit's {@code model}: a model's name, or a pattern with {@code *} for any run of characters; null when
	 * absent (the limit counts every call).
	 */
	private @Nullable String model(String prefix, @Nullable String model) {
		if (model == null) {
			return null;
		}
		if (model.isEmpty() || model.length() > MAX_MODEL_LENGTH || !model.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
			throw invalid(this.prefix + prefix + "model", "is '" + model + "'",
					"a model's name as the request body names it (e.g. gpt-4o), or a pattern where * stands for any "
							+ "run of characters (gpt-4o*, claude-*); printable ASCII without spaces, at most "
							+ MAX_MODEL_LENGTH + " characters");
		}
		return model;
	}

	/**
	 * What a limit counts: requests ({@code unit: requests}, the default), tokens ({@code unit: tokens}) or money
	 * ({@code unit: usd}). Where tokens and money are counted is the adapter's to say: a route that meters no LLM
	 * calls refuses such a limit of its own, and leaves out a plan's.
	 */
	private RouteLimit.Unit unit(String prefix, @Nullable String unit, Algorithm algorithm) {
		if (unit == null || unit.equals("requests")) {
			return RouteLimit.Unit.REQUESTS;
		}
		RouteLimit.Unit counted = unit.equals("tokens") ? RouteLimit.Unit.TOKENS
				: unit.equals("usd") ? RouteLimit.Unit.USD : null;
		if (counted == null) {
			throw invalid(this.prefix + prefix + "unit", "is '" + unit + "'", UNITS);
		}
		if (algorithm == Algorithm.CONCURRENCY) {
			throw invalid(this.prefix + prefix + "unit", "is '" + unit + "' on a limit of algorithm concurrency",
					"unit: requests (the default) there: a concurrency limit counts requests in flight, one slot each");
		}
		if (counted == RouteLimit.Unit.USD && algorithm == Algorithm.SLIDING_LOG) {
			throw invalid(this.prefix + prefix + "algorithm", "is 'sliding-log' on a limit counting money",
					"fixed-window (or a calendar quota), sliding-window-counter or token-bucket: the sliding log counts "
							+ "at most " + MAX_LOG_LIMIT + " units a window, $1 in micro-dollars");
		}
		if (algorithm == Algorithm.SLIDING_LOG_SORTED_SET) {
			throw invalid(this.prefix + prefix + "log-storage", "is 'sorted-set' on a limit counting " + unit,
					"the ring (the default log-storage: leave it out), which keeps one entry per call whatever its "
							+ "tokens; the sorted set keeps one per token, and a call of thousands of them takes "
							+ "Redis hundreds of ms");
		}
		return counted;
	}

	/**
	 * A money limit in US dollars ({@code 5}, {@code 0.015}, at most six decimals) as whole micro-dollars, at most
	 * what its algorithm counts ({@link WindowPolicy#maxLimit}: $1,000,000,000 on a fixed window, $1,000 else).
	 */
	private long dollars(String property, String text, Algorithm algorithm) {
		long most = WindowPolicy.maxLimit(algorithm);
		String allowed = "an amount of US dollars above 0 with at most six decimals (5, 0.015, 250.50), at most "
				+ LlmPrices.dollars(most) + " with " + algorithm.id()
				+ ((algorithm != Algorithm.FIXED_WINDOW) ? " (fixed-window or a calendar quota: up to "
						+ LlmPrices.dollars(WindowPolicy.MAX_FIXED_WINDOW_LIMIT) + ")" : "");
		long micro;
		try {
			micro = LlmPrices.microDollars(text);
		}
		catch (IllegalArgumentException | ArithmeticException ex) {
			throw invalid(this.prefix + property, "is '" + text + "'", allowed);
		}
		if (micro > most) {
			throw invalid(this.prefix + property, "is '" + text + "'", allowed);
		}
		return micro;
	}

	private Algorithm algorithm(String prefix, String id, @Nullable String storage) {
		boolean known = false;
		for (Algorithm candidate : Algorithm.values()) {
			if (candidate.id().equals(id)) {
				known = true;
				// the first storage listed is the default
				if (storage == null || storage.equals(candidate.storage())) {
					return candidate;
				}
			}
		}
		if (!known) {
			throw invalid(this.prefix + prefix + "algorithm", "is '" + id + "'", "one of " + Algorithm.ids());
		}
		boolean hasStorages = Algorithm.SLIDING_LOG.id().equals(id);
		throw invalid(this.prefix + prefix + "log-storage", "is '" + storage + "'",
				hasStorages ? "one of " + Algorithm.storages() : "only with " + Algorithm.SLIDING_LOG.id() + ", not " + id);
	}

	private Duration window(String property, @Nullable String text) {
		String allowed = "a duration of whole milliseconds from 1ms to 366d, such as 500ms, 10s, 1m, 1h or 1d";
		if (text == null || text.isEmpty()) {
			throw invalid(this.prefix + property, "is missing", allowed);
		}
		String trimmed = text.trim();
		if (!trimmed.isEmpty() && trimmed.chars().allMatch(Character::isDigit)) {
			// Boot reads a bare number as milliseconds: "60" was meant as a minute or a second, never 60 ms
			throw invalid(this.prefix + property, "is '" + text + "', a number without a unit, which would mean "
					+ trimmed + " ms", "a duration with its unit: did you mean " + trimmed + "s? (or " + trimmed + "ms, "
					+ trimmed + "m, " + trimmed + "h, " + trimmed + "d; from 1ms to 366d)");
		}
		try {
			Duration value = DurationStyle.detectAndParse(text);
			if (WindowPolicy.isValidWindow(value)) {
				return value;
			}
		}
		catch (IllegalArgumentException | DateTimeParseException | ArithmeticException ex) {
			// reported below
		}
		throw invalid(this.prefix + property, "is '" + text + "'", allowed);
	}

	private long number(String property, String text, long max, String allowed) {
		try {
			long value = Long.parseLong(text);
			if (value >= 1 && value <= max) {
				return value;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw invalid(this.prefix + property, "is '" + text + "'", allowed);
	}

	private boolean shadow() {
		String text = this.route.getOrDefault("shadow", "false");
		if (!text.equals("true") && !text.equals("false")) {
			throw invalid(this.prefix + "shadow", "is '" + text + "'", "true or false");
		}
		return Boolean.parseBoolean(text);
	}

	private FailMode failMode() {
		String text = this.route.getOrDefault("fail-mode", FailMode.OPEN.id());
		for (FailMode candidate : FailMode.values()) {
			if (candidate.id().equals(text)) {
				return candidate;
			}
		}
		throw invalid(this.prefix + "fail-mode", "is '" + text + "'", "one of " + FailMode.ids());
	}

	private InvalidRouteConfigurationException invalid(String property, String what, String allowed) {
		return new InvalidRouteConfigurationException(this.kind, this.routeId, property, what, allowed);
	}

}
