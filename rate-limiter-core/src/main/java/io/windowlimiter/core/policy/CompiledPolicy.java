package io.windowlimiter.core.policy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.zip.CRC32;

import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.core.RateLimitHeaders;
import org.jspecify.annotations.Nullable;

/**
 * One way a route decides a client: its own limits, or a plan's, or an override's, with everything a
 * request needs of them worked out once (key layout, the script's arguments, the policy header, the
 * local shares). Built by the {@link PolicyRegistry} when routes are built, never per request.
 */
public final class CompiledPolicy {

	private static final String REDIS_CLOCK = "";

	/** Which limits these are, for the deny cache and logs: "" for the route's own, else the plan's name. */
	public final String plan;

	public final RoutePolicy route;

	/** The limits in decision order: the route's own and its scopes', as the route or plan lists them. */
	public final List<RouteLimit> limits;

	/** The limits' policies, in decision order: what a reservation settles by. */
	public final List<WindowPolicy> policies;

	/**
	 * The script's ARGV, the same for every request while no limit is a calendar quota (else see
	 * {@link #arguments(long)}).
	 */
	public final LimitScript.Arguments arguments;

	/** Whether a limit has a penalty: then decisions carry the client's block key and each limit's block-for. */
	public final boolean penalty;

	/**
	 * Whether hot clients of this policy are admitted from parts of their quota leased from Redis: the route has a
	 * {@code lease} and every limit here is one a part counts exactly (an override may give a client others: it is
	 * then decided by Redis request by request).
	 */
	public final boolean leases;

	/** Whether a refusal gets the route's quota-status: some limit is a calendar quota and the route sets one. */
	public final boolean quota;

	/** The route whose block key a penalty sets: the route id, since a block refuses on its route. */
	private final String routeId;

	private final List<Long> blockForMillis;

	/** The arguments of a calendar quota's current period, and until when (this instance's clock) they hold. */
	private volatile Period period;

	private record Period(LimitScript.Arguments arguments, long untilMillis) {
	}

	public final Reported reported;

	/**
	 * The positions of the concurrency limits, whose slots a request holds until its response ends; empty
	 * when there are none.
	 */
	public final int[] concurrency;

	/** The positions of the limits that count tokens ({@code unit: tokens}); empty when none does. */
	public final int[] tokenLimits;

	/**
	 * The smallest of the token limits (and their bursts): no call's estimate is reserved above it, so a
	 * client whose budget is small still has its first call admitted; {@link Long#MAX_VALUE} when none.
	 */
	public final long smallestTokenLimit;

	/** The positions of the limits that count money ({@code unit: usd}); empty when none does. */
	public final int[] moneyLimits;

	/**
	 * The smallest of the money limits (and their bursts), in micro-dollars: no call's price is reserved above
	 * it, as {@link #smallestTokenLimit}; {@link Long#MAX_VALUE} when none.
	 */
	public final long smallestMoneyLimit;

	/** This instance's share of each limit (limit / instances, at least 1), for fail-mode local. */
	public final Reported shares;

	/** The metrics tag: the algorithms, e.g. {@code fixed-window+sliding-log}. */
	public final String algorithms;

	/** What the deny cache keys a client by, before its first Redis key: route and plan, since scopes share keys. */
	public final String denyPrefix;

	/** Per limit: the route id or scope name its key is made of, and the key's suffix. */
	private final String[] owners;

	private final boolean[] scoped;

	private final String[] suffixes;

	/**
	 * The positions of the limits with a {@code model}, which count only the calls naming a model they match;
	 * empty when none has.
	 */
	private final int[] modelLimits;

	/**
	 * The policies deciding the calls of each set of models met ({@link #forModel}), by the set of model limits
	 * they keep, a bit each; at most {@link #MAX_SELECTIONS} kept.
	 */
	private final Map<Long, CompiledPolicy> selections = new ConcurrentHashMap<>();

	/**
	 * The most selections of model limits kept per policy: each model a client names picks one; past this many
	 * (only patterns that overlap in many ways could make them) a selection is compiled per call, not kept, so no
	 * client can grow what an instance holds.
	 */
	static final int MAX_SELECTIONS = 64;

	/** The most limits with a model per policy: a selection is a bit each in a long. */
	public static final int MAX_MODEL_LIMITS = 63;

	CompiledPolicy(String routeId, String plan, RoutePolicy route, List<RouteLimit> limits) {
		this(routeId, plan, route, limits, suffixes(limits), "");
	}

	/**
	 * @param suffixes each limit's key suffix: a selection's limits keep the keys they have in the whole policy
	 * @param selection "" for a whole policy; for a selection of its model limits, what tells it apart in the
	 * deny cache
	 */
	private CompiledPolicy(String routeId, String plan, RoutePolicy route, List<RouteLimit> limits, String[] suffixes,
			String selection) {
		this.plan = plan;
		this.route = route;
		this.limits = List.copyOf(limits);
		List<WindowPolicy> policies = limits.stream().map(RouteLimit::policy).toList();
		this.routeId = routeId;
		this.policies = policies;
		this.blockForMillis = limits.stream().map(limit -> limit.blockFor().toMillis()).toList();
		this.penalty = this.blockForMillis.stream().anyMatch(millis -> millis > 0);
		this.quota = route.quotaStatus() != 0 && CalendarArgs.isQuota(limits);
		this.leases = route.leases() && LeaseArgs.indexNotLeasable(route.lease(), limits) < 0;
		this.arguments = withPenalty(LimitScript.arguments(policies, route.cost(), REDIS_CLOCK,
				System.currentTimeMillis(), route.maxDelay().toMillis()));
		this.reported = new Reported(this.limits);
		this.concurrency = IntStream.range(0, policies.size())
			.filter(i -> policies.get(i).algorithm().countsRequests())
			.toArray();
		this.tokenLimits = IntStream.range(0, limits.size()).filter(i -> limits.get(i).countsTokens()).toArray();
		this.smallestTokenLimit = smallest(policies, this.tokenLimits);
		this.moneyLimits = IntStream.range(0, limits.size()).filter(i -> limits.get(i).countsMoney()).toArray();
		this.smallestMoneyLimit = smallest(policies, this.moneyLimits);
		List<RouteLimit> shares = new ArrayList<>(limits.size());
		for (RouteLimit limit : limits) {
			WindowPolicy own = limit.policy();
			long share = Math.max(1, own.limit() / route.instances());
			// a calendar quota's share is counted per period too (the local limiter reads calendar())
			shares.add(limit.withPolicy(new WindowPolicy(own.algorithm(), share, own.window(), share, own.calendar())));
		}
		this.shares = new Reported(List.copyOf(shares));
		this.algorithms = policies.stream().map(policy -> policy.algorithm().id()).distinct().collect(Collectors.joining("+"));
		this.denyPrefix = routeId + '\n' + plan + '\n' + selection;
		this.owners = new String[limits.size()];
		this.scoped = new boolean[limits.size()];
		this.suffixes = suffixes;
		this.modelLimits = IntStream.range(0, limits.size()).filter(i -> limits.get(i).model() != null).toArray();
		if (this.modelLimits.length > MAX_MODEL_LIMITS) {
			throw new IllegalArgumentException("at most " + MAX_MODEL_LIMITS + " limits with a model, not "
					+ this.modelLimits.length);
		}
		for (int i = 0; i < limits.size(); i++) {
			String scope = limits.get(i).scope();
			this.scoped[i] = scope != null;
			this.owners[i] = (scope != null) ? scope : routeId;
		}
	}

	/**
	 * The smallest of these limits and their bursts: what one call may reserve in them at most;
	 * {@link Long#MAX_VALUE} for none.
	 */
	private static long smallest(List<WindowPolicy> policies, int[] positions) {
		return IntStream.of(positions)
			.mapToLong(i -> Math.min(policies.get(i).limit(), policies.get(i).burst()))
			.min()
			.orElse(Long.MAX_VALUE);
	}

	/** Each limit's key suffix, in order. */
	private static String[] suffixes(List<RouteLimit> limits) {
		String[] suffixes = new String[limits.size()];
		// a limit's key is numbered by its place among the limits of its route or scope that count what it
		// counts (tokens, or requests); the first has no number, so a route's keys stay put when it gains a
		// limit. A token limit's key is marked as such: so the n-th token limit of a client's policy and the n-th
		// request limit never share a key, whichever order a plan or override lists them in, and a change of
		// policy keeps the tokens a client used in its token limits, the requests in its request limits
		// A limit with a model is numbered among the limits of the same model, and its key ends with the model's
		// mark: it never shares a key with a limit of every model or of another model
		int[] places = keyPlaces(limits);
		for (int i = 0; i < limits.size(); i++) {
			RouteLimit limit = limits.get(i);
			String suffix = unitMark(limit) + limit.policy().algorithm().keySuffix();
			suffixes[i] = ((places[i] == 0) ? suffix : suffix + places[i]) + modelMark(limit.model());
		}
		return suffixes;
	}

	/**
	 * What ends the key of a limit with a model: {@code -m} and the CRC-32 of the model (pattern) as written, in
	 * hex. Not the pattern itself: a key's last part is one suffix without {@code :}, and a pattern may hold any
	 * character. No algorithm's suffix has a {@code -}.
	 */
	static String modelMark(@Nullable String model) {
		if (model == null) {
			return "";
		}
		CRC32 crc = new CRC32();
		crc.update(model.getBytes(StandardCharsets.UTF_8));
		return "-m" + String.format("%08x", crc.getValue());
	}

	/**
	 * The policy deciding a call that names {@code model}: these limits less those with a model the call's does
	 * not match (its calls leave their keys untouched); this policy itself when it has no limit with a model, or
	 * when the call matches every one.
	 * @param model the model the call's body names; null when none (then only limits without a model count it)
	 */
	public CompiledPolicy forModel(@Nullable String model) {
		if (this.modelLimits.length == 0) {
			return this;
		}
		long kept = 0;
		for (int bit = 0; bit < this.modelLimits.length; bit++) {
			if (this.limits.get(this.modelLimits[bit]).countsModel(model)) {
				kept |= 1L << bit;
			}
		}
		if (kept == (1L << this.modelLimits.length) - 1) {
			return this;
		}
		CompiledPolicy known = this.selections.get(kept);
		if (known != null) {
			return known;
		}
		CompiledPolicy selected = select(kept);
		if (this.selections.size() < MAX_SELECTIONS) {
			CompiledPolicy raced = this.selections.putIfAbsent(kept, selected);
			return (raced != null) ? raced : selected;
		}
		return selected;
	}

	/** The selections of model limits this policy has kept: their refusals are remembered apart. */
	public Collection<CompiledPolicy> selections() {
		return this.selections.values();
	}

	private CompiledPolicy select(long kept) {
		List<RouteLimit> limits = new ArrayList<>(this.limits.size());
		List<String> suffixes = new ArrayList<>(this.limits.size());
		int bit = 0;
		for (int i = 0; i < this.limits.size(); i++) {
			boolean model = this.limits.get(i).model() != null;
			if (!model || (kept & (1L << bit)) != 0) {
				limits.add(this.limits.get(i));
				suffixes.add(this.suffixes[i]);
			}
			if (model) {
				bit++;
			}
		}
		return new CompiledPolicy(this.routeId, this.plan, this.route, limits, suffixes.toArray(String[]::new),
				"models:" + Long.toHexString(kept) + '\n');
	}

	/**
	 * Which keys a limit's are numbered among: those of its route's (or its scope's) limits that count what it
	 * counts (tokens, or requests). Two limits of two policies share a key when they are of the same group, at
	 * the same place in it and of the same algorithm.
	 */
	static String keyGroup(RouteLimit limit) {
		return unitMark(limit) + ((limit.scope() != null) ? "scope:" + limit.scope() : "")
				+ ((limit.model() != null) ? "\nmodel:" + limit.model() : "");
	}

	/** Each limit's place among the limits of its {@link #keyGroup}, in order: what numbers its key. */
	static int[] keyPlaces(List<RouteLimit> limits) {
		Map<String, Integer> places = new HashMap<>();
		int[] place = new int[limits.size()];
		for (int i = 0; i < limits.size(); i++) {
			place[i] = places.merge(keyGroup(limits.get(i)), 1, Integer::sum) - 1;
		}
		return place;
	}

	/** Before a token limit's algorithm suffix in its key: {@code t} ({@code tc}, {@code tfl} ...). */
	public static final String TOKEN_KEY_MARK = "t";

	/** Before a money limit's algorithm suffix in its key: {@code u} ({@code ufl}, {@code uc}), for USD. */
	public static final String MONEY_KEY_MARK = "u";

	/** What marks a limit's key by its unit: a token limit's and a money limit's never share a request limit's. */
	private static String unitMark(RouteLimit limit) {
		return limit.countsTokens() ? TOKEN_KEY_MARK : limit.countsMoney() ? MONEY_KEY_MARK : "";
	}

	/**
	 * What an LLM call costs each limit, in order: a token limit the call's token estimate, at most the
	 * smallest token limit ({@link #smallestTokenLimit}) and at least 1; any other limit the route's cost (a
	 * concurrency limit takes one slot whatever it is).
	 * @param estimatedTokens the call's token estimate, uncapped
	 */
	public long[] costsOfCall(long estimatedTokens) {
		return costsOfCall(estimatedTokens, 1);
	}

	/**
	 * As {@link #costsOfCall(long)}, a money limit taking the estimate's price, at most the smallest money limit
	 * ({@link #smallestMoneyLimit}) and at least 1 micro-dollar.
	 * @param estimatedMicroDollars the estimate's price in whole micro-dollars, uncapped
	 */
	public long[] costsOfCall(long estimatedTokens, long estimatedMicroDollars) {
		long[] costs = new long[this.policies.size()];
		Arrays.fill(costs, this.route.cost());
		long tokens = Math.max(1, Math.min(estimatedTokens, this.smallestTokenLimit));
		for (int i : this.tokenLimits) {
			costs[i] = tokens;
		}
		long money = Math.max(1, Math.min(estimatedMicroDollars, this.smallestMoneyLimit));
		for (int i : this.moneyLimits) {
			costs[i] = money;
		}
		return costs;
	}

	/**
	 * The script's ARGV at this instance's now: a calendar quota's edges move at each period's end, so they
	 * are worked out again then (once per period, not per request); else {@link #arguments}.
	 */
	public LimitScript.Arguments arguments(long nowMillis) {
		if (this.policies.stream().noneMatch(policy -> policy.calendar() != null)) {
			return this.arguments;
		}
		Period current = this.period;
		if (current == null || nowMillis >= current.untilMillis()) {
			long until = this.policies.stream()
				.filter(policy -> policy.calendar() != null)
				.mapToLong(policy -> policy.calendar().edges(nowMillis)[2])
				.min()
				.getAsLong();
			current = new Period(withPenalty(LimitScript.arguments(this.policies, this.route.cost(), REDIS_CLOCK,
					nowMillis, this.route.maxDelay().toMillis())), until);
			this.period = current;
		}
		return current.arguments();
	}

	/** The arguments of a read at cost 0 at this instance's now, penalty included (to show a block). */
	public LimitScript.Arguments peekArguments(long nowMillis) {
		// on a route that holds, read as it decides: a slot reserved ahead is no bucket to pull back
		return withPenalty(LimitScript.arguments(this.policies, 0, REDIS_CLOCK, nowMillis,
				this.route.maxDelay().toMillis()));
	}

	private LimitScript.Arguments withPenalty(LimitScript.Arguments arguments) {
		return this.penalty ? arguments.withPenalty(this.blockForMillis) : arguments;
	}

	/** Each limit's block-for in ms, in decision order (0 for none): the penalty fail-mode local applies. */
	public List<Long> blockForMillis() {
		return this.blockForMillis;
	}

	/** The keys of the concurrency limits among the limits' keys (as {@link #keysFor}), in order. */
	public List<String> concurrencyKeys(List<String> limitKeys) {
		List<String> keys = new ArrayList<>(this.concurrency.length);
		for (int i : this.concurrency) {
			keys.add(limitKeys.get(i));
		}
		return keys;
	}

	/** The keys the script decides with: the limits' keys, then with a penalty the client's block key. */
	public List<String> decisionKeys(List<String> limitKeys, String clientKey) {
		if (!this.penalty) {
			return limitKeys;
		}
		List<String> keys = new ArrayList<>(limitKeys.size() + 1);
		keys.addAll(limitKeys);
		keys.add(blockKeyFor(clientKey));
		return keys;
	}

	/** The client's block key on this policy's route (whichever plan decides it). */
	public String blockKeyFor(String clientKey) {
		return RedisKeys.of(this.routeId, clientKey, BLOCK_SUFFIX);
	}

	/** The block key's last part: no algorithm's key suffix. */
	public static final String BLOCK_SUFFIX = "block";

	/** The client's keys, one per limit, all with the client's hash tag. */
	public List<String> keysFor(String clientKey) {
		List<String> keys = new ArrayList<>(this.owners.length);
		for (int i = 0; i < this.owners.length; i++) {
			keys.add(key(i, clientKey, this.suffixes[i]));
		}
		return keys;
	}

	/** The client's keys of the limits counted in one scope, in order. */
	public List<String> scopeKeysFor(String clientKey, String scope) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < this.owners.length; i++) {
			if (this.scoped[i] && this.owners[i].equals(scope)) {
				keys.add(key(i, clientKey, this.suffixes[i]));
			}
		}
		return keys;
	}

	/**
	 * The client's keys of its limits' previous layouts ({@link io.windowlimiter.core.algorithm.Algorithm#formerKeySuffix()}),
	 * on the route (scope null) or in one scope: a script reads such a key when its own does not exist, so a
	 * reset deletes them too.
	 */
	public List<String> formerKeysFor(String clientKey, @Nullable String scope) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < this.owners.length; i++) {
			String former = this.limits.get(i).policy().algorithm().formerKeySuffix();
			// a token limit's (or a model's) key has no former layout: its keys were new with its mark
			if (former != null && !this.limits.get(i).needsLlm() && (scope == null || (this.scoped[i] && this.owners[i].equals(scope)))) {
				String suffix = this.limits.get(i).policy().algorithm().keySuffix();
				keys.add(key(i, clientKey, former + this.suffixes[i].substring(suffix.length())));
			}
		}
		return keys;
	}

	private String key(int i, String clientKey, String suffix) {
		return this.scoped[i] ? RedisKeys.ofScope(this.owners[i], clientKey, suffix)
				: RedisKeys.of(this.owners[i], clientKey, suffix);
	}

	/** The limits of one scope among these, in order. */
	public List<RouteLimit> scopeLimits(String scope) {
		return this.limits.stream().filter(limit -> scope.equals(limit.scope())).toList();
	}

	/** Limits as reported to clients, with their policy header, which is the same for every answer. */
	public record Reported(List<RouteLimit> list, String policyHeader) {

		Reported(List<RouteLimit> list) {
			this(list, RateLimitHeaders.policy(list));
		}

	}

}
