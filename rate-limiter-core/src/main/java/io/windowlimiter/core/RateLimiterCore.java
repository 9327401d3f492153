package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

import io.micrometer.core.instrument.Timer;
import io.windowlimiter.core.RateLimitMetrics.Outcome;
import io.windowlimiter.core.access.Access;
import io.windowlimiter.core.access.ClientAccess;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.Settlement;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisBudget;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.plan.Assignment;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.MaxDelay;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteArgs;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.core.policy.RoutePolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Decides requests with plain values, for every adapter (the gateway's {@code RateLimiter} SPI, the
 * {@code WindowRateLimit} filter, the Server MVC filter): a route's limits, compiled once by the
 * {@link PolicyRegistry}; per request the {@link PlanSource} picks the client's policy (an assignment made
 * at run time, the plan its request names, or the route's default), then the core builds the client's
 * keys, has one script decide all of the policy's limits (through the {@link RedisGuard}) and turns the
 * verdict into an {@link Admission} with its headers; a client Redis has denied is answered from the
 * {@link DenyCache}, and when Redis cannot decide the route's fail-mode answers. Nothing here knows a web
 * server or a gateway.
 */
public final class RateLimiterCore {

	private static final Log logger = LogFactory.getLog(RateLimiterCore.class);

	/** Time from the Redis server's clock, for reads made by operators. */
	private static final String REDIS_CLOCK = "";

	/**
	 * How long after its first send a settle that may have run is sent again: the settle script's marker, which
	 * makes a second run change nothing, lives a minute from the run that wrote it (settle.lua), and that run came
	 * after the first send; the margin covers the second send's own wait ({@code redis-timeout}, a second at most).
	 */
	static final Duration SETTLE_SENT_AGAIN_WITHIN = Duration.ofSeconds(50);

	/** Fail-mode closed: denied, retry in a second, when Redis may well be back. */
	private static final Decision CLOSED_DENIAL = new Decision(false, 0, 1_000, 1_000);

	private final LimitScript script;

	private final PolicyRegistry registry;

	private final PlanSource plans;

	private final RedisGuard guard;

	private final DenyCache denyCache;

	private final LocalWindowLimiter localLimiter;

	private final RateLimitHeaders headers;

	private final RateLimitMetrics metrics;

	private final @Nullable PlanAssignments assignments;

	private final Clock clock;

	private volatile DenialListener denialListener = DenialListener.NONE;

	private volatile ClientAccess access = ClientAccess.NONE;

	private volatile NearLimit nearLimit = NearLimit.OFF;

	/** Routes whose client keys are credentials, hashed where they enter (without a secret until one is set). */
	private volatile CredentialRoutes credentials = new CredentialRoutes(new ClientKeyHash(null));

	/** What an exempt or allow-listed client gets: through, no limit asked, so no rate-limit headers. */
	private static final Admission EXEMPT = new Admission(true, Map.of(), List.of());

	private volatile HeldRequests held = new HeldRequests(HeldRequests.DEFAULT_MAX);

	/** The request-body bytes LLM routes buffer before admission, all together. */
	private volatile BufferedBodies bufferedBodies = new BufferedBodies(BufferedBodies.defaultMax());

	/** Reservations of a cost per limit made here and not settled yet: the client view's {@code reservedHere}. */
	private final ReservationsHere reservationsHere = new ReservationsHere();

	/**
	 * @param script decides the limits
	 * @param registry compiles routes with the plans and scopes they name
	 * @param assignments plans and overrides assigned to clients at run time; null for none
	 * @param plansFromRequests whether requests may name their plan (a plan resolver exists): a route that
	 * uses plans then asks the adapter's {@code requestedPlan}
	 * @param guard bounds every Redis call
	 * @param denyCache answers clients Redis has denied, until their denial ends
	 * @param localLimiter decides for routes in fail-mode {@code local} while Redis is away
	 * @param headers which headers to send, under which names
	 * @param metrics where to count answers
	 * @param logInterval at most one log line per this interval about unknown plans
	 * @param clock this instance's clock, used only by the local limiter
	 */
	public RateLimiterCore(LimitScript script, PolicyRegistry registry, @Nullable PlanAssignments assignments,
			boolean plansFromRequests, RedisGuard guard, DenyCache denyCache, LocalWindowLimiter localLimiter,
			RateLimitHeaders headers, RateLimitMetrics metrics, Duration logInterval, Clock clock) {
		this.script = script;
		this.registry = registry;
		this.plans = new PlanSource(registry, assignments, plansFromRequests, metrics, logInterval);
		this.guard = guard;
		this.denyCache = denyCache;
		this.localLimiter = localLimiter;
		this.headers = headers;
		this.metrics = metrics;
		this.clock = clock;
		// a killed Redis is seen by its closed connection, a failed-over master by the cluster's slots
		guard.follow(script.topology());
		this.assignments = assignments;
		if (assignments != null) {
			// denials given under a client's old plan say nothing about its new one
			assignments.onChange(denyCache::clear);
			assignments.checkOverridesWith(this::checkOverride);
			assignments.readCredentialsInClearWith(this::hashOfInClear);
		}
	}

	/**
	 * The hash a credential an assignment names in clear (made before such keys were hashed) is known by now;
	 * null when the target keeps its keys as they are, or the key is a hash already.
	 */
	private @Nullable String hashOfInClear(String target, String clientKey) {
		String known = clientKeyOf(target, clientKey);
		return known.equals(clientKey) ? null : known;
	}

	/** Which assignments name a credential in clear depends on which routes hash their keys, and how. */
	private void reindexAssignments() {
		if (this.assignments != null) {
			this.assignments.reindex();
		}
	}

	/** A core without plans, assignments or plans named by requests, e.g. for tests and tools. */
	public static RateLimiterCore of(LimitScript script, RedisGuard guard, DenyCache denyCache,
			LocalWindowLimiter localLimiter, RateLimitHeaders headers, RateLimitMetrics metrics, Clock clock) {
		return new RateLimiterCore(script, new PolicyRegistry(Map.of()), null, false, guard, denyCache, localLimiter,
				headers, metrics, Duration.ofSeconds(10), clock);
	}

	/**
	 * Decides one request of the client on the route (or a filter's own id), at the route's cost.
	 * @param requestedPlan the plan the request names, subscribed to only when the route uses plans and no
	 * assignment decides the client; empty for none
	 * @return the admission, or an error when the route has no limits
	 */
	public Mono<Admission> admit(String routeId, String clientKey, Mono<String> requestedPlan) {
		return admit(routeId, clientKey, -1, requestedPlan);
	}

	/**
	 * Decides one request that costs {@code cost} of every limit ({@code -1}: the route's {@code cost}).
	 * @return the admission; a {@link CostAboveLimitException} when the cost is more than a limit of the
	 * client's policy allows at once (it could never pass)
	 * @see #admit(String, String, Mono)
	 */
	public Mono<Admission> admit(String routeId, String clientKey, long cost, Mono<String> requestedPlan) {
		return admit(routeId, clientKey, requestedPlan, (policy, id) -> decide(routeId, policy, id, cost));
	}

	/**
	 * Decides one LLM call under the client's policy (an assignment made at run time, the plan its request
	 * names, or the route's default), in the one script, all or nothing: each limit counting tokens
	 * ({@code unit: tokens}) reserves the call's token estimate, capped at the smallest token limit of that
	 * policy, and every other limit the route's cost (a concurrency limit one slot). Lists, plans, penalties
	 * and calendar quotas apply as to any request; the deny cache is not asked (a denial at one estimate says
	 * nothing of another: {@link #knownRefusal} answers what it can before the body is read), and the call is not
	 * held (an LLM route has no max-delay). Settle it with {@link #settleTokens}.
	 * @param estimatedTokens the call's token estimate, uncapped
	 * @return the admission
	 */
	public Mono<Admission> admitTokens(String routeId, String clientKey, long estimatedTokens,
			Mono<String> requestedPlan) {
		return admit(routeId, clientKey, requestedPlan,
				(policy, id) -> decideEach(routeId, policy, id, policy.costsOfCall(estimatedTokens)));
	}

	/**
	 * How long a remembered refusal by a token limit is trusted before an LLM call's body is read: calls of the
	 * client settled on another instance may have given tokens back since, which this instance does not see.
	 */
	static final long TOKEN_DENIAL_TRUSTED_MILLIS = 1_000;

	/**
	 * The refusal of an LLM call known before its body is read, so that a client refused does not have its
	 * body read (up to {@code max-body-bytes}) for nothing: a client the route's lists or an operator refuse,
	 * or one this instance's deny cache remembers as refused under its policy, by a request or concurrency limit
	 * (which the call's estimate does not change), or by a token limit whose remembered remaining is below the
	 * least this call can be estimated at, when that refusal is less than {@value #TOKEN_DENIAL_TRUSTED_MILLIS}
	 * ms old. Empty when Redis must decide ({@link #admitTokens}); nothing is sent to Redis here.
	 * @param bodyLength the body's length as the request declares it ({@code Content-Length}), -1 when unknown
	 * @param bytesPerToken the bytes of body counted as one prompt token by the estimate
	 */
	public Mono<Admission> knownRefusal(String routeId, String clientKey, long bodyLength, int bytesPerToken,
			Mono<String> requestedPlan) {
		CompiledRoute route = route(routeId);
		if (route == null) {
			return Mono.error(new IllegalStateException("Route '" + routeId + "' has no rate limits"));
		}
		String id = this.credentials.any() ? this.credentials.stored(policyIdOf(routeId), clientKey) : clientKey;
		Access access = this.access.of(routeId, route.scopes, route.lists, id, listHash(routeId, clientKey));
		if (access != null) {
			// an exempt client is answered (and counted) once, by the admission
			return access.exempt() ? Mono.empty() : ReadyAnswer.of(byAccess(routeId, route, access));
		}
		CompiledPolicy known = this.plans.known(routeId, route, id);
		Mono<CompiledPolicy> policy = (known != null) ? Mono.just(known)
				: this.plans.fromRequest(routeId, route, id, requestedPlan);
		// the least the call's estimate can be: its prompt's part, from the body's declared length
		long least = (bodyLength > 0) ? (bodyLength + bytesPerToken - 1) / bytesPerToken : 1;
		return policy.flatMap(decided -> {
			Admission refusal = remembered(routeId, decided, id, least);
			return (refusal != null) ? ReadyAnswer.of(refusal) : Mono.empty();
		});
	}

	/** The deny cache's refusal of an LLM call estimated at {@code leastTokens} or more; null when Redis decides. */
	private @Nullable Admission remembered(String routeId, CompiledPolicy policy, String id, long leastTokens) {
		if (policy.route.shadow()) {
			return null;
		}
		DenyCache.Denial denial = this.denyCache.denial(denyKey(policy, policy.keysFor(id)));
		if (denial == null || denial.limitIndex() >= policy.limits.size()) {
			return null;
		}
		if (policy.limits.get(denial.limitIndex()).countsTokens()) {
			long least = policy.costsOfCall(leastTokens)[denial.limitIndex()];
			if (denial.decision().remaining() >= least || denial.ageMillis() > TOKEN_DENIAL_TRUSTED_MILLIS) {
				return null;
			}
		}
		this.metrics.decision(routeId, policy.algorithms, Outcome.DENIED);
		this.denialListener.denied(routeId, id);
		return answer(policy, policy.reported, denial.limitIndex(), denial.decision())
			.withStatus(quotaStatus(policy, List.of(denial.limitIndex())));
	}

	/**
	 * What both kinds of admission share: the client's key as the core knows it from here on (on a route keyed
	 * by credentials its hash, see {@link CredentialRoutes}); a client the route's lists or scopes decide is
	 * answered without Redis; anyone else is decided by {@code decide} under the policy its assignment or its
	 * request names, with that key.
	 */
	private Mono<Admission> admit(String routeId, String clientKey, Mono<String> requestedPlan,
			BiFunction<CompiledPolicy, String, Mono<Admission>> decide) {
		CompiledRoute route = route(routeId);
		if (route == null) {
			return Mono.error(new IllegalStateException("Route '" + routeId + "' has no rate limits"));
		}
		String id = this.credentials.any() ? this.credentials.stored(policyIdOf(routeId), clientKey) : clientKey;
		Access access = this.access.of(routeId, route.scopes, route.lists, id, listHash(routeId, clientKey));
		if (access != null) {
			// not Mono.just: see ReadyAnswer
			return ReadyAnswer.of(byAccess(routeId, route, access));
		}
		CompiledPolicy policy = this.plans.known(routeId, route, id);
		if (policy != null) {
			return decide.apply(policy, id);
		}
		return this.plans.fromRequest(routeId, route, id, requestedPlan).flatMap(known -> decide.apply(known, id));
	}

	/** The id the route's limits are registered by: its own, else the default filters' (see {@link #route}). */
	private String policyIdOf(String routeId) {
		return (this.registry.route(routeId) != null) ? routeId : PolicyRegistry.DEFAULT_FILTERS;
	}

	/** Decides a request costing {@code costs[i]} of limit i of the client's policy, laid out by that policy. */
	private Mono<Admission> decideEach(String routeId, CompiledPolicy policy, String id, long[] costs) {
		if (policy.route.holds()) {
			// the script would reserve slots ahead that nothing here waits for (adapters refuse the combination)
			return Mono.error(new IllegalStateException("Route '" + routeId + "' holds requests (max-delay); a cost "
					+ "per limit is decided for now only"));
		}
		long most = 0;
		for (int i = 0; i < costs.length; i++) {
			if (RouteArgs.indexTooSmallFor(costs[i], List.of(policy.limits.get(i))) >= 0) {
				return Mono.error(new CostAboveLimitException(costs[i], policy.limits.get(i), maxCost(policy)));
			}
			most = Math.max(most, costs[i]);
		}
		long cost = most;
		long requestId = Reservation.newId();
		LimitScript.Arguments arguments = withRequestId(policy, policy.arguments(this.clock.millis()).withCosts(costs),
				requestId);
		List<String> keys = policy.keysFor(id);
		Timer.Sample sample = this.metrics.startRedis();
		return protect(routeId, policy, id, keys, arguments, requestId)
			.doOnNext(verdict -> this.metrics.stopRedis(sample, routeId, true))
			.doOnError(error -> redisFailed(sample, routeId, error))
			.map(verdict -> answer(routeId, id, policy, denyKey(policy, keys), cost, verdict,
					verdict.allowed() ? reservedHere(new Reservation(routeId, policy, keys, cost, costs, verdict.now(),
							verdict.decisions(), requestId)) : null))
			.onErrorResume(error -> ReadyAnswer.of(whenRedisFails(routeId, policy, id, keys, costs)));
	}

	/** Kept until settled: {@link #settle(Reservation, long[])} takes it out, whichever way the settle goes. */
	private Reservation reservedHere(Reservation reservation) {
		this.reservationsHere.add(reservation, this.clock.millis());
		return reservation;
	}

	/**
	 * What the reservations of a cost per limit (LLM calls) that this instance made and has not settled yet
	 * hold of the limit counted on this key: calls running here, not on other instances; null when none.
	 */
	public ReservationsHere.@Nullable Held reservedHere(String key) {
		return this.reservationsHere.of(key, this.clock.millis());
	}

	/** The reservations made here and not settled yet, for tests of their bound. */
	ReservationsHere reservationsHere() {
		return this.reservationsHere;
	}

	/** Where answers are counted, for adapters that count more (an LLM route's tokens). */
	public RateLimitMetrics metrics() {
		return this.metrics;
	}

	/**
	 * A listed, blocked or exempt client, answered without Redis: exempt passes with no headers (no limit was
	 * asked); refused is a 403 whose Retry-After is the time left of an operator's block, and absent for a
	 * deny list's refusal, which no wait ends.
	 */
	private Admission byAccess(String routeId, CompiledRoute route, Access access) {
		if (access.exempt()) {
			this.metrics.decision(routeId, route.byDefault.algorithms, Outcome.EXEMPT);
			return EXEMPT;
		}
		this.metrics.decision(routeId, route.byDefault.algorithms, Outcome.BLOCKED);
		long left = this.access.millisLeft(access);
		Map<String, String> headers = (left > 0)
				? Map.of(RateLimitHeaders.RETRY_AFTER, Long.toString(RateLimitHeaders.ceilSeconds(left))) : Map.of();
		return new Admission(false, headers, List.of()).withStatus(Admission.FORBIDDEN);
	}

	/**
	 * Decides allow and deny lists, and operators' blocks and exemptions, before any limit (see
	 * {@link ClientAccess}).
	 */
	public void setClientAccess(ClientAccess access) {
		this.access = access;
	}

	/** Bounds the request-body bytes LLM routes buffer before admission (an eighth of the heap until set). */
	public void setBufferedBodies(BufferedBodies bufferedBodies) {
		this.bufferedBodies = bufferedBodies;
	}

	/** The request-body bytes LLM routes buffer before admission: each body takes its share through a lease. */
	public BufferedBodies bufferedBodies() {
		return this.bufferedBodies;
	}

	/** Counts (and logs) allowed requests near a limit; off unless set. */
	public void setNearLimit(NearLimit nearLimit) {
		this.nearLimit = nearLimit;
	}

	/**
	 * Hashes the client keys of routes keyed by credentials with this hash (its secret); an unkeyed SHA-256
	 * until set. Set before requests come: a client's key changes with the hash.
	 */
	public void setClientKeyHash(ClientKeyHash hash) {
		this.credentials = this.credentials.withHash(hash);
		reindexAssignments();
	}

	/**
	 * The key the client an operator names is known by on the target (a route, or a scope: keyed by credentials
	 * when a route naming it is): on a target keyed by credentials the hash of the key given, unless it is one
	 * already (as the endpoint prints it); else the key as given. What the other operator methods take.
	 */
	public String clientKeyOf(String target, String clientKey) {
		List<String> scopeRoutes = scopeRoutes(target);
		boolean credentials = (scopeRoutes != null) ? scopeRoutes.stream().anyMatch(this.credentials::has)
				: this.credentials.has(policyIdOf(target));
		return this.credentials.ofOperator(credentials, clientKey);
	}

	/**
	 * Why the client is exempt or refused on the target whatever its quota, for operators: on a route, as a
	 * request would be decided; on a scope, the operator's rule made there. Null when its limits decide.
	 * @param client the client's key, or on a target keyed by credentials its hash ({@link #clientKeyOf})
	 */
	public @Nullable Access accessOf(String target, String client) {
		String clientKey = clientKeyOf(target, client);
		if (isScope(target)) {
			return this.access.rule(target, clientKey);
		}
		CompiledRoute route = route(target);
		// as a request of the client is decided: its hash against the lists' entries, hashed too
		return (route != null) ? this.access.of(target, route.scopes, route.lists, clientKey,
				this.credentials.listHash(this.credentials.has(policyIdOf(target)), clientKey)) : null;
	}

	/** The hash the route's lists are matched by, for a request's client ({@link CredentialRoutes#listHash}). */
	private @Nullable ClientKeyHash listHash(String routeId, String clientKey) {
		return this.credentials.any() ? this.credentials.listHash(this.credentials.has(policyIdOf(routeId)), clientKey)
				: null;
	}

	/** The route's own limits, else those set on the gateway's default filters; null when it has none. */
	public @Nullable CompiledRoute route(String routeId) {
		CompiledRoute route = this.registry.route(routeId);
		return (route != null) ? route : this.registry.route(PolicyRegistry.DEFAULT_FILTERS);
	}

	/**
	 * Compiles the route's limits from its arguments ({@code window-rate-limiter.limit} ...); a bad argument
	 * throws {@link io.windowlimiter.core.policy.InvalidRouteConfigurationException}.
	 */
	public void configure(String routeId, Map<String, Object> args) {
		configure(routeId, args, SlotRelease.NEVER);
	}

	/**
	 * As {@link #configure(String, Map)}, for an adapter that may release concurrency slots when each response
	 * ends ({@link Admission#slots()}): only such an adapter's routes may have {@code algorithm: concurrency}.
	 * Whether it does on this route, {@link #route}'s {@link CompiledRoute#releasesSlots} then says.
	 */
	public void configure(String routeId, Map<String, Object> args, SlotRelease release) {
		configure(routeId, args, release, false);
	}

	/**
	 * As {@link #configure(String, Map, SlotRelease)}, for an adapter that meters the route's LLM calls
	 * ({@code llm}) or not: only on such a route do limits count tokens ({@code unit: tokens}), its calls are
	 * decided by {@link #admitTokens}, and an override replaces the limits of the kinds it names.
	 */
	public void configure(String routeId, Map<String, Object> args, SlotRelease release, boolean metersTokens) {
		if (this.registry.put(routeId, args, release, metersTokens)) {
			// denials given under the old limits say nothing about the new ones
			this.denyCache.clear();
		}
		boolean credentialsBefore = this.credentials.has(routeId);
		this.credentials.configure(routeId, args);
		if (this.credentials.has(routeId) != credentialsBefore) {
			reindexAssignments();
		}
	}

	/**
	 * Forgets the limits of every route not among the gateway's routes now, called after the gateway's routes
	 * were refreshed: a deleted route leaves the endpoint and no longer pins its scopes' limits.
	 * @param routeIds the ids of every route the gateway has
	 * @return the ids forgotten
	 */
	public Set<String> retainRoutes(Set<String> routeIds) {
		Set<String> gone = this.registry.retain(routeIds);
		this.credentials.forget(gone);
		if (!gone.isEmpty()) {
			logger.info("Forgot the rate limits of deleted route(s) " + String.join(", ", gone));
		}
		return gone;
	}

	private Mono<Admission> decide(String routeId, CompiledPolicy policy, String id, long requestCost) {
		long cost = (requestCost < 0) ? policy.route.cost() : requestCost;
		// a calendar quota's arguments change with its period
		LimitScript.Arguments arguments = policy.arguments(this.clock.millis());
		if (cost != policy.route.cost()) {
			// a cost of the request's own (a header, a resolver) may not fit the limits of the client's policy
			int tooSmall = RouteArgs.indexTooSmallFor(cost, policy.limits);
			if (tooSmall >= 0) {
				return Mono.error(new CostAboveLimitException(cost, policy.limits.get(tooSmall), maxCost(policy)));
			}
			arguments = arguments.withCost(cost);
		}
		long requestId = Reservation.newId();
		arguments = withRequestId(policy, arguments, requestId);
		List<String> keys = policy.keysFor(id);
		String cacheKey = denyKey(policy, keys);
		DenyCache.Denial denial = policy.route.shadow() ? null : this.denyCache.denial(cacheKey, cost);
		if (denial != null) {
			this.metrics.decision(routeId, policy.algorithms, Outcome.DENIED);
			this.denialListener.denied(routeId, id);
			// not Mono.just: see ReadyAnswer (a Reactor Netty keep-alive hang)
			return ReadyAnswer.of(answer(policy, policy.reported, denial.limitIndex(), denial.decision())
				.withStatus(quotaStatus(policy, List.of(denial.limitIndex()))));
		}
		if (policy.route.holds()) {
			LimitScript.Arguments held = arguments;
			return this.held.hold(mayHold -> fromRedis(routeId, policy, id, cost, keys,
					mayHold ? held : held.withoutHold(), cacheKey, requestId));
		}
		return fromRedis(routeId, policy, id, cost, keys, arguments, cacheKey, requestId);
	}

	/** The arguments recording the request by its id in the policy's concurrency limits, if it has any. */
	private static LimitScript.Arguments withRequestId(CompiledPolicy policy, LimitScript.Arguments arguments,
			long requestId) {
		return (policy.concurrency.length == 0) ? arguments : arguments.withRequestId(Reservation.idText(requestId));
	}

	private Mono<Admission> fromRedis(String routeId, CompiledPolicy policy, String id, long cost, List<String> keys,
			LimitScript.Arguments arguments, String cacheKey, long requestId) {
		Timer.Sample sample = this.metrics.startRedis();
		return protect(routeId, policy, id, keys, arguments, requestId)
			.doOnNext(verdict -> this.metrics.stopRedis(sample, routeId, true))
			.doOnError(error -> redisFailed(sample, routeId, error))
			.map(verdict -> answer(routeId, id, policy, cacheKey, cost, verdict,
					reservation(routeId, policy, keys, cost, verdict, requestId)))
			.onErrorResume(error -> ReadyAnswer.of(whenRedisFails(routeId, policy, id, keys, cost)));
	}

	/**
	 * The decision's script through the guard. The script's Mono is lazy: nothing is sent unless the guard lets
	 * the decision go to Redis. A decision that takes concurrency slots and is given up (timed out, stalled, its
	 * client gone) while its command may have been written is answered by the fail-mode, which holds no Redis
	 * slot; its script may still run when Redis answers again and take the slots for a request that never asked
	 * to release them: so the guard sends their release once the node has answered a later call.
	 */
	private Mono<Verdict> protect(String routeId, CompiledPolicy policy, String id, List<String> keys,
			LimitScript.Arguments arguments, long requestId) {
		Mono<Verdict> decision = this.script.decide(policy.decisionKeys(keys, id), arguments);
		Object node = this.script.nodeOf(keys);
		if (policy.concurrency.length == 0) {
			return this.guard.protect(node, decision, this.script.probe(keys));
		}
		return this.guard.protect(node, decision, this.script.probe(keys), releaseGivenUp(routeId, policy, keys, requestId));
	}

	/**
	 * Releases the slots a given-up decision's script may have taken: through the guard (bounded, refused at once
	 * while the node stalls), never queued or retried; counted in {@code gateway.ratelimit.releases.given_up}
	 * ({@code released}: its script had run and held them; {@code gone}: it held none, it never ran or was
	 * refused; {@code dropped}: Redis could not take it, the slots expire after their window). Never fails.
	 */
	private Mono<Released> releaseGivenUp(String routeId, CompiledPolicy policy, List<String> keys, long requestId) {
		List<String> slots = policy.concurrencyKeys(keys);
		// a client refused for want of the slots this held is decided by Redis again
		return released(slots, Reservation.idText(requestId), denyKey(policy, keys))
			.onErrorResume(error -> Mono.just(Released.DROPPED))
			.doOnNext(released -> this.metrics.givenUpRelease(routeId, released.tag));
	}

	/**
	 * What one answer may wait for Redis in all ({@code redis-timeout}): an adapter bounds every Redis call it
	 * makes before its response is committed with one, so several filters and a settle add up to no more.
	 */
	public RedisBudget newBudget() {
		return this.guard.newBudget();
	}

	/** What Redis counted for an allowed request, to settle; null when it counted nothing. */
	private static @Nullable Reservation reservation(String routeId, CompiledPolicy policy, List<String> keys,
			long cost, Verdict verdict, long requestId) {
		return (verdict.allowed() && cost > 0)
				? new Reservation(routeId, policy, keys, cost, null, verdict.now(), verdict.decisionsFromNow(), requestId) : null;
	}

	/**
	 * Releases the concurrency slots a reservation took, once its response has ended: one Redis call through
	 * the same guard as settles (bounded by {@code redis-timeout}, refused at once while Redis is stalled). A
	 * release Redis cannot take then (stalled, down, timed out, too many waiting) is kept by the guard and sent
	 * once more when Redis answers again ({@code deferred}; its outcome counted in
	 * {@code gateway.ratelimit.releases.deferred}): dropped, the slots stayed held until their window ended, a
	 * client refused for the whole window after a freeze of seconds. Dropped only beyond the guard's bound of
	 * kept calls, or when Redis cannot take the second send either. Idempotent in Redis (removing an id twice
	 * removes it once), so the second send harms nothing if the first was written and ran on thawing. Never fails.
	 */
	Mono<Released> release(Reservation reservation) {
		CompiledPolicy policy = reservation.policy();
		List<String> all = reservation.keys();
		List<String> keys = policy.concurrencyKeys(all);
		String routeId = reservation.routeId();
		String denyKey = denyKey(policy, all);
		String id = reservation.id();
		// forgotten as the release goes, so a client asking again as Redis frees the slot is not refused from
		// memory; and again on the reply, for a refusal Redis gave meanwhile
		return Mono.defer(() -> {
			this.denyCache.forget(denyKey);
			return released(keys, id, denyKey);
		})
			.onErrorResume(error -> {
				Mono<Released> later = released(keys, id, denyKey).onErrorResume(again -> Mono.just(Released.DROPPED))
					.doOnNext(released -> this.metrics.deferredRelease(routeId, released.tag));
				return Mono.just(this.guard.sendWhenAnswering(error, this.script.nodeOf(keys), later,
						this.script.probe(keys)) ? Released.DEFERRED : Released.DROPPED);
			})
			.doOnNext(released -> this.metrics.release(routeId, released.tag));
	}

	/** The release script for one request's slots, through the guard; fails when Redis cannot take it. */
	private Mono<Released> released(List<String> keys, String id, String denyKey) {
		return Mono.defer(() -> this.guard.protect(this.script.nodeOf(keys), this.script.release(keys, id),
				this.script.probe(keys)))
			.map(removed -> (removed > 0) ? Released.RELEASED : Released.GONE)
			.doOnNext(released -> this.denyCache.forget(denyKey));
	}

	/** What became of a release of concurrency slots. */
	public enum Released {

		/** Redis gave the slots back. */
		RELEASED,
		/** Redis held none of them: released before, or expired (the response outlived the window). */
		GONE,
		/** Redis could not take it in time, nor keep it for later: the slots expire after their window. */
		DROPPED,
		/** Redis could not take it now: sent once more when Redis answers again. */
		DEFERRED;

		final String tag = name().toLowerCase();

	}

	/**
	 * Settles a reservation to the request's actual cost, once its response has told it: each limit gives
	 * back what it still holds of a lower cost, or counts a higher one now, even past the limit (see
	 * {@code docs/settle.md}). One more Redis round trip, through the same guard as decisions: it waits no
	 * longer than a decision; when Redis cannot take it the settle is kept and sent once more when Redis answers
	 * again ({@code DEFERRED}, see {@link #sent}), and only one dropped beyond that leaves the request charged what
	 * was reserved. An actual cost equal to the
	 * reservation sends nothing; a second settle of the same reservation sends nothing and changes nothing.
	 * Never fails.
	 * @param actualCost what the request cost, 0 or more (0: the whole reservation is given back)
	 */
	public Mono<Settled> settle(Reservation reservation, long actualCost) {
		if (actualCost < 0) {
			return Mono.error(new IllegalArgumentException("A cost is 0 or more, was " + actualCost));
		}
		String routeId = reservation.routeId();
		if (!reservation.claim()) {
			this.metrics.settle(routeId, Settled.DUPLICATE.tag);
			return Mono.just(Settled.DUPLICATE);
		}
		this.reservationsHere.remove(reservation);
		if (actualCost == reservation.cost()) {
			this.metrics.settle(routeId, Settled.UNCHANGED.tag);
			return Mono.just(Settled.UNCHANGED);
		}
		return sent(reservation, this.script.settle(reservation.keys(), reservation.markers(this.clock.millis()),
				reservation.id(), reservation.policies(), reservation.resets(), reservation.reservedAt(),
				reservation.cost(), actualCost, REDIS_CLOCK), actualCost < reservation.cost());
	}

	/**
	 * Settles a reservation made with a cost per limit ({@link #admitTokens}) to the
	 * actual cost of each limit, in one script; limits whose actual cost is the reserved one are left as they
	 * are. As {@link #settle(Reservation, long)} otherwise.
	 */
	public Mono<Settled> settle(Reservation reservation, long[] actualCosts) {
		long[] reserved = reservation.costs();
		if (actualCosts.length != reserved.length) {
			return Mono.error(new IllegalArgumentException("One actual cost per limit: " + reserved.length));
		}
		boolean refund = false;
		int changed = 0;
		for (int i = 0; i < reserved.length; i++) {
			if (actualCosts[i] < 0) {
				return Mono.error(new IllegalArgumentException("A cost is 0 or more, was " + actualCosts[i]));
			}
			changed += (actualCosts[i] != reserved[i]) ? 1 : 0;
			refund |= actualCosts[i] < reserved[i];
		}
		String routeId = reservation.routeId();
		if (!reservation.claim()) {
			this.metrics.settle(routeId, Settled.DUPLICATE.tag);
			return Mono.just(Settled.DUPLICATE);
		}
		// settled from here on (a settle Redis drops leaves it charged as reserved, no longer outstanding)
		this.reservationsHere.remove(reservation);
		if (changed == 0) {
			this.metrics.settle(routeId, Settled.UNCHANGED.tag);
			return Mono.just(Settled.UNCHANGED);
		}
		return sent(reservation, settleChanged(reservation, reserved, actualCosts, changed), refund);
	}

	/**
	 * Settles an LLM call admitted by {@link #admitTokens} to the tokens it used: each limit counting tokens to
	 * {@code actualTokens}, every other limit as reserved (a request stays counted whatever it used). As
	 * {@link #settle(Reservation, long[])} otherwise.
	 * @param actualTokens the tokens the call used, 0 or more
	 */
	public Mono<Settled> settleTokens(Reservation reservation, long actualTokens) {
		long[] costs = reservation.costs();
		for (int i : reservation.policy().tokenLimits) {
			costs[i] = actualTokens;
		}
		return settle(reservation, costs);
	}

	/**
	 * The settle script's call through the guard, its outcome counted: the one way both settles go to Redis. A
	 * settle Redis cannot take (stalled, down, timed out, too many waiting) is kept by the guard and sent once
	 * more when Redis answers again ({@code deferred}; its outcome counted in
	 * {@code gateway.ratelimit.settles.deferred}), the same command (the same markers): dropped, the client
	 * stayed charged its whole reservation. Sent twice, the settle script applies it once while its marker lives
	 * (a minute from the run that wrote it): a settle that may have been written (it timed out rather than
	 * failing at once) is therefore sent again only within {@link #SETTLE_SENT_AGAIN_WITHIN} of its first send,
	 * and dropped after; one that failed at once was never written, and goes whenever Redis answers.
	 * @param refunded whether some limit cost less than it reserved (a refund)
	 */
	private Mono<Settled> sent(Reservation reservation, Mono<Settlement> call, boolean refunded) {
		List<String> keys = reservation.keys();
		String routeId = reservation.routeId();
		return Mono.defer(() -> {
			long first = System.nanoTime();
			return settled(reservation, call, refunded).onErrorResume(error -> {
				boolean written = !RedisGuard.failedAtOnce(error);
				Mono<Settled> later = Mono.defer(() -> (written
						&& System.nanoTime() - first > SETTLE_SENT_AGAIN_WITHIN.toNanos())
						? Mono.just(Settled.DROPPED) : settled(reservation, call, refunded))
					.onErrorResume(again -> Mono.just(Settled.DROPPED))
					.doOnNext(settled -> this.metrics.deferredSettle(routeId, settled.tag));
				return Mono.just(this.guard.sendWhenAnswering(error, this.script.nodeOf(keys), later,
						this.script.probe(keys)) ? Settled.DEFERRED : Settled.DROPPED);
			});
		}).doOnNext(settled -> this.metrics.settle(routeId, settled.tag));
	}

	/** The settle script's call through the guard; fails when Redis cannot take it. */
	private Mono<Settled> settled(Reservation reservation, Mono<Settlement> call, boolean refunded) {
		List<String> keys = reservation.keys();
		return this.guard.protect(this.script.nodeOf(keys), call, this.script.probe(keys))
			.map(settlement -> settlement.applied() ? Settled.APPLIED : Settled.DUPLICATE)
			.doOnNext(settled -> {
				if (settled == Settled.APPLIED && refunded) {
					// a refund may let the client in before a denial remembered meanwhile ends
					this.denyCache.forget(denyKey(reservation.policy(), keys));
				}
			});
	}

	/**
	 * The settle script for the limits whose cost changed, only: an LLM route's request limits keep the 1 they
	 * reserved, and sending them would cost Redis their arguments and the settle's scan for nothing.
	 * @param changed how many limits' costs changed, at least 1
	 */
	private Mono<Settlement> settleChanged(Reservation reservation, long[] reserved, long[] actual, int changed) {
		List<String> keys = reservation.keys();
		List<WindowPolicy> policies = reservation.policies();
		List<Long> resets = reservation.resets();
		if (changed < reserved.length) {
			List<String> someKeys = new ArrayList<>(changed);
			List<WindowPolicy> somePolicies = new ArrayList<>(changed);
			List<Long> someResets = new ArrayList<>(changed);
			long[] someReserved = new long[changed];
			long[] someActual = new long[changed];
			for (int i = 0, j = 0; i < reserved.length; i++) {
				if (actual[i] != reserved[i]) {
					someKeys.add(keys.get(i));
					somePolicies.add(policies.get(i));
					someResets.add(resets.get(i));
					someReserved[j] = reserved[i];
					someActual[j++] = actual[i];
				}
			}
			keys = someKeys;
			policies = somePolicies;
			resets = someResets;
			reserved = someReserved;
			actual = someActual;
		}
		// the costs are written into the command's arguments at once: no copy of the caller's array is needed
		return this.script.settle(keys, reservation.markers(this.clock.millis()), reservation.id(), policies, resets,
				reservation.reservedAt(), reserved, actual, REDIS_CLOCK);
	}

	/** What became of a settle. */
	public enum Settled {

		/** Redis settled the reservation: refunded what its limits still held, or charged the rest. */
		APPLIED,
		/** The actual cost was the reserved one: nothing to send. */
		UNCHANGED,
		/** The reservation was settled before: nothing changed. */
		DUPLICATE,
		/**
		 * Redis could not take it in time (down, frozen, too many waiting), nor keep it for later: the reservation
		 * stands as charged.
		 */
		DROPPED,
		/** Redis could not take it now: sent once more when Redis answers again. */
		DEFERRED;

		final String tag = name().toLowerCase();

	}

	/** Times only decisions that went to Redis: one failed at once is no 0 ms round trip. */
	private void redisFailed(Timer.@Nullable Sample sample, String routeId, Throwable error) {
		if (!RedisGuard.failedAtOnce(error)) {
			this.metrics.stopRedis(sample, routeId, false);
		}
		else if (RedisGuard.isShed(error)) {
			this.metrics.shed(routeId);
		}
	}

	private Admission answer(String routeId, String id, CompiledPolicy policy, String cacheKey, long cost,
			Verdict verdict, @Nullable Reservation reservation) {
		int reported = verdict.reported();
		boolean shadow = policy.route.shadow();
		if (!verdict.allowed() && !shadow) {
			this.denyCache.remember(cacheKey, reported, verdict.reportedDecision().remaining(), verdict.retryAfterMillis(),
					cost);
		}
		if (!verdict.allowed()) {
			this.denialListener.denied(routeId, id);
		}
		else {
			this.nearLimit.allowed(routeId, policy.limits, verdict.decisions(), id);
		}
		Outcome outcome = verdict.allowed() ? Outcome.ALLOWED : shadow ? Outcome.SHADOWED : Outcome.DENIED;
		this.metrics.decision(routeId, policy.algorithms, outcome);
		List<String> violated = verdict.denying().stream().map(i -> policy.limits.get(i).name()).toList();
		Admission admission = answer(policy, policy.reported, reported, verdict.reportedDecision(), verdict.allowed(),
				violated)
			.withStatus(verdict.allowed() ? 0 : quotaStatus(policy, verdict.denying()))
			.withReservation(reservation);
		if (reservation != null && policy.concurrency.length > 0) {
			admission = admission.withSlots(new Slots(() -> release(reservation)));
		}
		return (verdict.holdMillis() > 0) ? admission.withDelay(verdict.holdMillis()) : admission;
	}

	/** The route's quota-status when one of the limits that refused is a calendar quota; else 0, the usual. */
	private static int quotaStatus(CompiledPolicy policy, List<Integer> refusing) {
		if (!policy.quota) {
			return 0;
		}
		boolean calendar = refusing.stream().anyMatch(i -> policy.limits.get(i).policy().calendar() != null);
		return calendar ? policy.route.quotaStatus() : 0;
	}

	/**
	 * @param violated the names of the limits that refused the request, for a problem-details body; empty
	 * when the refusal is not about quota (fail-mode closed)
	 */
	private Admission answer(CompiledPolicy policy, CompiledPolicy.Reported limits, int reported, Decision decision,
			boolean allowed, List<String> violated) {
		boolean blocked = !allowed && !policy.route.shadow();
		Map<String, String> headers = this.headers.of(limits.policyHeader(), limits.list().get(reported), decision,
				blocked);
		return new Admission(!blocked, headers, blocked ? violated : List.of(), decision.remaining());
	}

	private Admission answer(CompiledPolicy policy, CompiledPolicy.Reported limits, int reported, Decision decision) {
		List<String> violated = decision.allowed() ? List.of() : List.of(limits.list().get(reported).name());
		return answer(policy, limits, reported, decision, decision.allowed(), violated);
	}

	private Admission whenRedisFails(String routeId, CompiledPolicy policy, String id, List<String> keys, long cost) {
		long[] costs = new long[policy.limits.size()];
		Arrays.fill(costs, (cost < 0) ? policy.route.cost() : cost);
		return whenRedisFails(routeId, policy, id, keys, costs);
	}

	/** What the route's fail-mode answers for a request costing {@code costs[i]} of limit i. */
	private Admission whenRedisFails(String routeId, CompiledPolicy policy, String id, List<String> keys, long[] costs) {
		return switch (policy.route.failMode()) {
			case OPEN -> {
				this.metrics.decision(routeId, policy.algorithms, Outcome.ERROR);
				yield new Admission(true, Map.of(), List.of(), Long.MAX_VALUE);
			}
			case CLOSED -> {
				this.metrics.decision(routeId, policy.algorithms, Outcome.FALLBACK);
				yield answer(policy, policy.reported, 0, CLOSED_DENIAL, false, List.of());
			}
			case LOCAL -> {
				this.metrics.decision(routeId, policy.algorithms, Outcome.FALLBACK);
				yield local(policy, id, keys, costs);
			}
		};
	}

	/** The most a request may cost under the policy: what its smallest limit (or burst) allows at once. */
	private static long maxCost(CompiledPolicy policy) {
		long max = Long.MAX_VALUE;
		for (RouteLimit limit : policy.limits) {
			if (limit.policy().algorithm().countsRequests() || limit.countsTokens()) {
				continue;
			}
			max = Math.min(max, Math.min(limit.policy().limit(), limit.policy().burst()));
		}
		return max;
	}

	/**
	 * Each limit's share for this instance, in memory, reported as such: a calendar quota per local period,
	 * a penalty blocking the client on this instance, a quota's refusal with the route's quota-status. Nothing
	 * is held (max-delay): a request past the share is refused at once.
	 */
	private Admission local(CompiledPolicy policy, String id, List<String> keys, long[] costs) {
		List<WindowPolicy> shares = policy.shares.list().stream().map(RouteLimit::policy).toList();
		LocalWindowLimiter.Penalty penalty = policy.penalty
				? new LocalWindowLimiter.Penalty(policy.blockKeyFor(id), policy.blockForMillis()) : null;
		// each limit its own cost: an LLM call's estimate in its token limits only, the route's cost in the others
		Verdict verdict = this.localLimiter.decideAll(keys, shares, penalty, costs, this.clock.millis());
		List<String> violated = verdict.denying().stream().map(i -> policy.shares.list().get(i).name()).toList();
		Admission admission = answer(policy, policy.shares, verdict.reported(), verdict.reportedDecision(), verdict.allowed(),
				violated)
			.withStatus(verdict.allowed() ? 0 : quotaStatus(policy, verdict.denying()));
		if (policy.concurrency.length == 0 || !verdict.allowed()) {
			return admission;
		}
		List<String> slots = policy.concurrencyKeys(keys);
		// taken in this instance's memory: released there, wherever Redis is by then
		return admission.withSlots(new Slots(() -> Mono.fromRunnable(() -> this.localLimiter.release(slots))));
	}

	// For operators (io.windowlimiter.core.operations): routes, and one client's standing, off the decision path.
	// A client is named by its key, or on a target keyed by credentials by its hash too (clientKeyOf).

	/** Every route given limits, by route id ({@code defaultFilters} for the gateway's default filters). */
	public Map<String, RoutePolicy> policies() {
		return this.registry.policies();
	}

	/** The policy of the route (its own, else the default filters'), or null when it has none. */
	public @Nullable RoutePolicy policyOf(String routeId) {
		CompiledRoute route = route(routeId);
		return (route != null) ? route.policy : null;
	}

	/** Every scope some route names, with the routes naming it, by scope name. */
	public Map<String, List<String>> scopes() {
		return this.registry.scopes();
	}

	/** Each declared plan's limits, by plan name. */
	public Map<String, List<RouteLimit>> plans() {
		return this.registry.planLimits();
	}

	/** Whether the target names a scope: no route has that id, and some route names the scope. */
	public boolean isScope(String target) {
		return scopeRoutes(target) != null;
	}

	/** The scopes a route names under any plan, in order; empty for an unknown route. */
	public List<String> scopesOf(String routeId) {
		CompiledRoute route = route(routeId);
		return (route != null) ? route.scopes : List.of();
	}

	/**
	 * The client's standing on each limit that decides it now, read by the decision script at cost 0, so
	 * reading spends nothing. On a route: its limits under the client's assignment, else the route's
	 * default (a plan its requests name is not known here). On a scope: the scope's limits under the
	 * client's assignment on the scope, else the default of the first route naming it. Empty for a target
	 * that is neither.
	 */
	public Mono<Standing> peek(String target, String client) {
		String clientKey = clientKeyOf(target, client);
		List<String> scopeRoutes = scopeRoutes(target);
		if (scopeRoutes != null) {
			String routeId = scopeRoutes.get(0);
			CompiledRoute route = this.registry.route(routeId);
			if (route == null) {
				return Mono.empty();
			}
			CompiledPolicy policy = this.plans.onScope(routeId, route, target, clientKey);
			List<RouteLimit> limits = policy.scopeLimits(target);
			return read(policy, limits, policy.scopeKeysFor(clientKey, target), LimitScript.arguments(
					limits.stream().map(RouteLimit::policy).toList(), 0, REDIS_CLOCK, this.clock.millis(),
					policy.route.maxDelay().toMillis()));
		}
		CompiledRoute route = route(target);
		if (route == null) {
			return Mono.empty();
		}
		CompiledPolicy policy = knownPolicy(target, route, clientKey);
		// a route's read shows the client's block (penalty) too
		return read(policy, policy.limits, policy.decisionKeys(policy.keysFor(clientKey), clientKey),
				policy.peekArguments(this.clock.millis()));
	}

	private Mono<Standing> read(CompiledPolicy policy, List<RouteLimit> limits, List<String> keys,
			LimitScript.Arguments arguments) {
		String plan = policy.plan.isEmpty() ? null : policy.plan;
		if (limits.isEmpty()) {
			return Mono.just(new Standing(plan, limits, List.of(), 0, List.of()));
		}
		return Mono.defer(() -> {
			// taken before the Redis read is sent: a reservation registered by then was counted in Redis before
			// the read runs there, so the remaining quota counts whatever this shows as reserved here (one made
			// after shows in neither), whichever thread handles which answer first
			List<ReservationsHere.@Nullable Held> held = new ArrayList<>(limits.size());
			for (int i = 0; i < limits.size(); i++) {
				held.add(reservedHere(keys.get(i)));
			}
			return this.guard
				.protect(this.script.nodeOf(keys), this.script.decide(keys, arguments), this.script.probe(keys))
				.map(verdict -> new Standing(plan, limits, verdict.decisions(), verdict.blockedMillis(),
						Collections.unmodifiableList(held)));
		});
	}

	/**
	 * Every Redis key that may hold the client's counts on the target: on a route, under its assignment,
	 * the default and each plan (scoped limits' keys are shared with the other routes naming the scope); on
	 * a scope, the scope's keys under each of those on every route naming it. Empty for a target that is
	 * neither.
	 */
	public List<String> keysOf(String target, String client) {
		String clientKey = clientKeyOf(target, client);
		Set<String> keys = new LinkedHashSet<>();
		List<String> scopeRoutes = scopeRoutes(target);
		if (scopeRoutes != null) {
			for (String routeId : scopeRoutes) {
				CompiledRoute route = this.registry.route(routeId);
				if (route != null) {
					choices(routeId, route, clientKey).forEach(policy -> {
						keys.addAll(policy.scopeKeysFor(clientKey, target));
						keys.addAll(policy.formerKeysFor(clientKey, target));
					});
				}
			}
			return List.copyOf(keys);
		}
		CompiledRoute route = route(target);
		if (route != null) {
			choices(target, route, clientKey).forEach(policy -> {
				keys.addAll(policy.keysFor(clientKey));
				keys.addAll(policy.formerKeysFor(clientKey, null));
				if (policy.penalty) {
					// a reset lifts the client's block too
					keys.add(policy.blockKeyFor(clientKey));
				}
			});
		}
		return List.copyOf(keys);
	}

	/**
	 * Forgets this instance's cached denials of the client on the route, or on every route naming the scope,
	 * and on every route sharing a scope with that route, whose counters a reset deletes too: Redis decides
	 * its next request.
	 */
	public void forgetDenial(String target, String client) {
		String clientKey = clientKeyOf(target, client);
		List<String> scopeRoutes = scopeRoutes(target);
		Set<String> routes = new LinkedHashSet<>((scopeRoutes != null) ? scopeRoutes : List.of(target));
		if (scopeRoutes == null) {
			Map<String, List<String>> scopes = this.registry.scopes();
			scopesOf(target).forEach(scope -> routes.addAll(scopes.getOrDefault(scope, List.of())));
		}
		for (String routeId : routes) {
			CompiledRoute route = route(routeId);
			if (route != null) {
				choices(routeId, route, clientKey)
					.forEach(policy -> this.denyCache.forget(denyKey(policy, policy.keysFor(clientKey))));
			}
		}
	}

	/**
	 * Checks an override's limits against the cost of each route it would apply on (the route, or every
	 * route naming the scope): a request that cannot fit them would never pass; and a token limit needs a route
	 * among them that meters LLM calls.
	 * @throws io.windowlimiter.core.policy.InvalidRouteConfigurationException naming {@code limits[i].limit} (or {@code .burst}) and the
	 * cost of the first route it does not fit, or {@code limits[i].unit}
	 */
	public void checkOverride(String target, List<RouteLimit> limits) {
		checkOverride(target, new Assignment(null, limits, 0));
	}

	/**
	 * As {@link #checkOverride(String, List)}, and a limit naming no algorithm must be one the algorithm of the limit
	 * it replaces can count ({@link PolicyRegistry#checkOverrideAlgorithms}).
	 * @throws io.windowlimiter.core.policy.InvalidRouteConfigurationException also naming {@code limits[i].limit}
	 */
	public void checkOverride(String target, Assignment override) {
		List<RouteLimit> limits = override.limits();
		List<String> scopeRoutes = scopeRoutes(target);
		this.registry.checkOverrideTokens(target, (scopeRoutes != null) ? scopeRoutes : List.of(target), limits);
		for (String routeId : (scopeRoutes != null) ? scopeRoutes : List.of(target)) {
			CompiledRoute route = route(routeId);
			if (route != null) {
				PolicyRegistry.checkOverrideCost(target, routeId, route.policy, limits);
				this.registry.checkOverrideReleased(target, routeId, limits);
				MaxDelay.checkOverride(target, routeId, route.policy, limits);
				this.registry.checkOverrideAlgorithms(target, routeId, route, limits, override.keepsAlgorithm());
			}
		}
	}

	/**
	 * What the deny cache keys a client by: route and plan, then the client's first Redis key, which
	 * {@code RedisKeys} has hashed if the client key was long or odd. So an entry's size is bounded whatever
	 * a client sends (an {@code X-API-Key} of 8 KB costs what a short one does).
	 */
	private static String denyKey(CompiledPolicy policy, List<String> keys) {
		return policy.denyPrefix + keys.get(0);
	}

	/** The routes naming the scope, when the target is a scope and not a route id; else null. */
	private @Nullable List<String> scopeRoutes(String target) {
		if (this.registry.route(target) != null) {
			return null;
		}
		List<String> routes = this.registry.scopes().get(target);
		return (routes != null && !routes.isEmpty()) ? routes : null;
	}

	private CompiledPolicy knownPolicy(String routeId, CompiledRoute route, String clientKey) {
		return this.plans.withoutRequest(routeId, route, clientKey);
	}

	/** Every policy that may decide the client on the route: its assignment's, the default, each plan's. */
	private Set<CompiledPolicy> choices(String routeId, CompiledRoute route, String clientKey) {
		return this.plans.candidates(routeId, route, clientKey);
	}

	/**
	 * Bounds how many requests of routes with a {@code max-delay} this instance holds at once
	 * ({@code window-rate-limiter.max-delayed}; {@link HeldRequests#DEFAULT_MAX} until set).
	 */
	public void setHeldRequests(HeldRequests held) {
		this.held = held;
	}

	/**
	 * Tells {@code listener} of every request refused by a limit (or that would be, on a shadow route), e.g.
	 * to find the clients denied most. It runs on the decision path: it must be quick and must not throw.
	 */
	public void setDenialListener(DenialListener listener) {
		this.denialListener = listener;
	}

	/** Told of each request refused by a limit; see {@link #setDenialListener}. */
	@FunctionalInterface
	public interface DenialListener {

		/** Tells nobody. */
		DenialListener NONE = (routeId, clientKey) -> {
		};

		/** A request of {@code clientKey} on route {@code routeId} was refused. */
		void denied(String routeId, String clientKey);

	}

	/**
	 * A client's standing on a route or scope.
	 * @param plan the plan whose limits these are; null for the route's own limits
	 * @param limits the limits that decide the client, in order
	 * @param decisions one per limit: remaining and reset now (nothing was spent)
	 * @param blockedMillis how long the client's penalty still refuses it on the route; 0 for none
	 * @param reservedHere one per limit: what the calls admitted here and not settled yet reserved of it (see
	 * {@link #reservedHere(String)}), as it stood when the read was sent; null for none
	 */
	public record Standing(@Nullable String plan, List<RouteLimit> limits, List<Decision> decisions,
			long blockedMillis, List<ReservationsHere.@Nullable Held> reservedHere) {
	}

}
