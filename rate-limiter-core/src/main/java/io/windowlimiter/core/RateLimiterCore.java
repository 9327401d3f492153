package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.windowlimiter.core.access.Access;
import io.windowlimiter.core.access.ClientAccess;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisBudget;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.plan.Assignment;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.core.policy.RoutePolicy;
import io.windowlimiter.metering.LlmRequest;
import io.windowlimiter.metering.TokenEstimate;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Decides requests with plain values, for every adapter (the gateway's {@code RateLimiter} SPI, the
 * {@code WindowRateLimit} filter, the Server MVC filter): a route's limits, compiled once by the
 * {@link PolicyRegistry}; per request the {@link PlanSource} picks the client's policy (an assignment made
 * at run time, the plan its request names, or the route's default), then the core builds the client's
 * keys, has one script decide all of the policy's limits (through the {@link RedisGuard}) and turns the
 * verdict into an {@link Admission} with its headers; a client Redis has denied is answered from the
 * {@link DenyCache}, and when Redis cannot decide the route's fail-mode answers. Nothing here knows a web
 * server or a gateway.
 *
 * <p>This class is the one door adapters and operators use; each job behind it has a class of its own, in
 * the order a request meets them: {@code Targets} (the route and the client's key), {@code Admissions} (may it
 * pass), {@code RedisDecisions} (the script through the guard), {@code Answers} (verdict to admission),
 * {@code FailModeAnswers} (when Redis cannot decide), {@code Settles} and {@code SlotReleases} (after the
 * response), and for operators {@code ClientView} (one client's standing and keys) and {@code OverrideChecks}.
 */
public final class RateLimiterCore {

	private static final Log logger = LogFactory.getLog(RateLimiterCore.class);

	private final PolicyRegistry registry;

	private final RedisGuard guard;

	private final DenyCache denyCache;

	private final RateLimitMetrics metrics;

	private final Targets targets;

	private final Admissions admissions;

	private final Answers answers;

	private final Settles settles;

	private final SlotReleases releases;

	private final ClientView clients;

	private final OverrideChecks overrides;

	/** The request-body bytes LLM routes buffer before admission, all together. */
	private volatile BufferedBodies bufferedBodies = new BufferedBodies(BufferedBodies.defaultMax());

	/** Reservations of a cost per limit made here and not settled yet: the client view's {@code reservedHere}. */
	private final ReservationsHere reservationsHere = new ReservationsHere();

	/** Parts of hot clients' quotas leased from Redis here, on routes with a {@code lease}. */
	private final Leases leases;

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
		this.registry = registry;
		this.guard = guard;
		this.denyCache = denyCache;
		this.metrics = metrics;
		PlanSource plans = new PlanSource(registry, assignments, plansFromRequests, metrics, logInterval);
		this.targets = new Targets(registry, assignments);
		this.releases = new SlotReleases(script, guard, metrics);
		this.answers = new Answers(headers, metrics, denyCache, this.releases);
		this.settles = new Settles(script, guard, denyCache, metrics, this.reservationsHere, clock);
		this.leases = new Leases(this.settles::settle, metrics, System::nanoTime, Schedulers.parallel());
		this.admissions = new Admissions(this.targets, plans, new RedisDecisions(script, guard, this.releases, metrics),
				denyCache, this.answers, new FailModeAnswers(localLimiter, this.answers, metrics, clock),
				this.reservationsHere, this.leases, clock);
		this.clients = new ClientView(this.targets, plans, script, guard, denyCache, this.reservationsHere, this.leases,
				clock);
		this.overrides = new OverrideChecks(registry, this.targets);
		// a killed Redis is seen by its closed connection, a failed-over master by the cluster's slots
		guard.follow(script.topology());
		if (assignments != null) {
			// denials given under a client's old plan say nothing about its new one, and parts leased under it
			// must not be admitted under the new one
			assignments.onChange(() -> {
				denyCache.clear();
				this.leases.giveBackAll();
			});
			assignments.checkOverridesWith(this::checkOverride);
			assignments.readCredentialsInClearWith(this.targets::hashOfInClear);
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
		return this.admissions.admit(routeId, clientKey, cost, requestedPlan);
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
		return admitTokens(routeId, clientKey, estimatedTokens, null, requestedPlan);
	}

	/**
	 * {@link #admitTokens(String, String, long, Mono)} for a call naming {@code model}: the limits with a
	 * {@code model} it does not match are left out of the decision (and of the settle), their keys untouched.
	 * @param model the model the call's body names ({@link io.windowlimiter.metering.LlmRequest#model()}); null
	 * when it names none, then only the limits without a model count it
	 */
	public Mono<Admission> admitTokens(String routeId, String clientKey, long estimatedTokens, @Nullable String model,
			Mono<String> requestedPlan) {
		return this.admissions.admitTokens(routeId, clientKey, estimatedTokens, model, requestedPlan);
	}

	/**
	 * {@link #admitTokens(String, String, long, String, Mono)} from the call's estimate whole: a limit counting
	 * money ({@code unit: usd}) reserves its price, the prompt at the model's input price and the output at its
	 * output price (in whole micro-dollars, rounded up), capped at the smallest money limit of the policy. Settle
	 * it with {@link #settleCall}. Ask {@link #unpriced} first: a model no price covers is refused there.
	 */
	public Mono<Admission> admitCall(String routeId, String clientKey, TokenEstimate estimate, @Nullable String model,
			Mono<String> requestedPlan) {
		return this.admissions.admitCall(routeId, clientKey, estimate, model, requestedPlan);
	}

	/**
	 * Why an LLM call naming {@code model} cannot be admitted on the route: some policy of it counts money and
	 * {@code window-rate-limiter.llm-prices} prices no such model (no entry, pattern or {@code default}). The
	 * adapter answers it as a 400 naming the model, before anything is counted. Null when the call can go on.
	 */
	public LlmRequest.@Nullable Refusal unpriced(String routeId, @Nullable String model) {
		CompiledRoute route = this.targets.route(routeId);
		if (route == null || !route.countsMoney() || this.targets.prices().priceOf(model) != null) {
			return null;
		}
		return new LlmRequest.Refusal("model", (model == null)
				? "The request names no model, and this route's budget in money prices calls by their model"
				: "The model '" + model + "' has no price on this route, whose budget is in money: the gateway's "
						+ "price table names other models");
	}

	/**
	 * The refusal of an LLM call known before its body is read, so that a client refused does not have its
	 * body read (up to {@code max-body-bytes}) for nothing: a client the route's lists or an operator refuse,
	 * or one this instance's deny cache remembers as refused under its policy, by a request limit
	 * (which the call's estimate does not change), or by a token limit whose remembered remaining is below the
	 * least this call can be estimated at, when that refusal is less than a second old
	 * ({@code Admissions.TOKEN_DENIAL_TRUSTED_MILLIS}). Empty when Redis must decide ({@link #admitTokens});
	 * nothing is sent to Redis here.
	 * @param bodyLength the body's length as the request declares it ({@code Content-Length}), -1 when unknown
	 * @param bytesPerToken the bytes of body counted as one prompt token by the estimate
	 */
	public Mono<Admission> knownRefusal(String routeId, String clientKey, long bodyLength, int bytesPerToken,
			Mono<String> requestedPlan) {
		return this.admissions.knownRefusal(routeId, clientKey, bodyLength, bytesPerToken, requestedPlan);
	}

	/**
	 * What the reservations of a cost per limit (LLM calls) that this instance made and has not settled yet
	 * hold of the limit counted on this key: calls running here, not on other instances; null when none.
	 */
	public ReservationsHere.@Nullable Held reservedHere(String key) {
		return this.clients.reservedHere(key);
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
	 * Decides allow and deny lists, and operators' blocks and exemptions, before any limit (see
	 * {@link ClientAccess}).
	 */
	public void setClientAccess(ClientAccess access) {
		this.admissions.setClientAccess(access);
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
		this.answers.setNearLimit(nearLimit);
	}

	/**
	 * Hashes the client keys of routes keyed by credentials with this hash (its secret); an unkeyed SHA-256
	 * until set. Set before requests come: a client's key changes with the hash.
	 */
	public void setClientKeyHash(ClientKeyHash hash) {
		this.targets.setClientKeyHash(hash);
	}

	/**
	 * The key the client an operator names is known by on the target (a route, or a scope: keyed by credentials
	 * when a route naming it is): on a target keyed by credentials the hash of the key given, unless it is one
	 * already (as the endpoint prints it); else the key as given. What the other operator methods take.
	 */
	public String clientKeyOf(String target, String clientKey) {
		return this.targets.clientKeyOf(target, clientKey);
	}

	/**
	 * Why the client is exempt or refused on the target whatever its quota, for operators: on a route, as a
	 * request would be decided; on a scope, the operator's rule made there. Null when its limits decide.
	 * @param client the client's key, or on a target keyed by credentials its hash ({@link #clientKeyOf})
	 */
	public @Nullable Access accessOf(String target, String client) {
		return this.admissions.accessOf(target, clientKeyOf(target, client));
	}

	/** The route's own limits, else those set on the gateway's default filters; null when it has none. */
	public @Nullable CompiledRoute route(String routeId) {
		return this.targets.route(routeId);
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
			// denials given under the old limits say nothing about the new ones; parts leased under them go back
			this.denyCache.clear();
			this.leases.giveBackAll();
		}
		this.targets.configure(routeId, args);
	}

	/**
	 * Forgets the limits of every route not among the gateway's routes now, called after the gateway's routes
	 * were refreshed: a deleted route leaves the endpoint and no longer pins its scopes' limits.
	 * @param routeIds the ids of every route the gateway has
	 * @return the ids forgotten
	 */
	public Set<String> retainRoutes(Set<String> routeIds) {
		Set<String> gone = this.registry.retain(routeIds);
		this.targets.forget(gone);
		if (!gone.isEmpty()) {
			logger.info("Forgot the rate limits of deleted route(s) " + String.join(", ", gone));
		}
		return gone;
	}

	/**
	 * What one answer may wait for Redis in all ({@code redis-timeout}): an adapter bounds every Redis call it
	 * makes before its response is committed with one, so several filters and a settle add up to no more.
	 */
	public RedisBudget newBudget() {
		return this.guard.newBudget();
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
		return this.releases.release(reservation);
	}

	/**
	 * Gives every part of a hot client's quota leased here back to Redis ({@code lease}): at shutdown, so that the
	 * units this instance did not admit are other instances' to admit at once rather than after their window.
	 * @return done when Redis has taken them, or the guard gave them up ({@code redis-timeout})
	 */
	public Mono<Void> giveBackLeases() {
		return this.leases.giveBackAll();
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
	 * again ({@code DEFERRED}, see {@code Settles}), and only one dropped beyond that leaves the request charged what
	 * was reserved. An actual cost equal to the
	 * reservation sends nothing; a second settle of the same reservation sends nothing and changes nothing.
	 * Never fails.
	 * @param actualCost what the request cost, 0 or more (0: the whole reservation is given back)
	 */
	public Mono<Settled> settle(Reservation reservation, long actualCost) {
		return this.settles.settle(reservation, actualCost);
	}

	/**
	 * Settles a reservation made with a cost per limit ({@link #admitTokens}) to the
	 * actual cost of each limit, in one script; limits whose actual cost is the reserved one are left as they
	 * are. As {@link #settle(Reservation, long)} otherwise.
	 */
	public Mono<Settled> settle(Reservation reservation, long[] actualCosts) {
		return this.settles.settle(reservation, actualCosts);
	}

	/**
	 * Settles an LLM call admitted by {@link #admitTokens} to the tokens it used: each limit counting tokens to
	 * {@code actualTokens}, every other limit as reserved (a request stays counted whatever it used). As
	 * {@link #settle(Reservation, long[])} otherwise.
	 * @param actualTokens the tokens the call used, 0 or more
	 */
	public Mono<Settled> settleTokens(Reservation reservation, long actualTokens) {
		return this.settles.settleTokens(reservation, actualTokens);
	}

	/**
	 * Settles an LLM call admitted by {@link #admitCall}: each token limit to the tokens it used, each money
	 * limit to their price (at most the limit itself), every other limit as reserved.
	 */
	public Mono<Settled> settleCall(Reservation reservation, LlmCharge charge) {
		return this.settles.settleCall(reservation, charge);
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
		return this.targets.scopeRoutes(target) != null;
	}

	/** The scopes a route names under any plan, in order; empty for an unknown route. */
	public List<String> scopesOf(String routeId) {
		return this.clients.scopesOf(routeId);
	}

	/**
	 * The client's standing on each limit that decides it now, read by the decision script at cost 0, so
	 * reading spends nothing. On a route: its limits under the client's assignment, else the route's
	 * default (a plan its requests name is not known here). On a scope: the scope's limits under the
	 * client's assignment on the scope, else the default of the first route naming it. Empty for a target
	 * that is neither.
	 */
	public Mono<Standing> peek(String target, String client) {
		return this.clients.peek(target, clientKeyOf(target, client));
	}

	/**
	 * Deletes a client's keys ({@link #keysOf}), an operator's reset, and notes when under the client's hash tag:
	 * a settle of a reservation made before leaves those keys alone, so a stream admitted before the reset neither
	 * refunds its pre-reset reservation into the counts made since (fresh quota) nor charges its usage there.
	 * @return how many keys were deleted
	 */
	public Mono<Long> resetKeys(List<String> keys) {
		return this.clients.resetKeys(keys);
	}

	/**
	 * Every Redis key that may hold the client's counts on the target: on a route, under its assignment,
	 * the default and each plan (scoped limits' keys are shared with the other routes naming the scope); on
	 * a scope, the scope's keys under each of those on every route naming it. Empty for a target that is
	 * neither.
	 */
	public List<String> keysOf(String target, String client) {
		return this.clients.keysOf(target, clientKeyOf(target, client));
	}

	/**
	 * Forgets this instance's cached denials of the client on the route, or on every route naming the scope,
	 * and on every route sharing a scope with that route, whose counters a reset deletes too: Redis decides
	 * its next request.
	 */
	public void forgetDenial(String target, String client) {
		this.clients.forgetDenial(target, clientKeyOf(target, client));
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
		this.overrides.check(target, override);
	}

	/**
	 * Bounds how many requests of routes with a {@code max-delay} this instance holds at once
	 * ({@code window-rate-limiter.max-delayed}; {@link HeldRequests#DEFAULT_MAX} until set).
	 */
	public void setHeldRequests(HeldRequests held) {
		this.admissions.setHeldRequests(held);
	}

	/**
	 * Tells {@code listener} of every request refused by a limit (or that would be, on a shadow route), e.g.
	 * to find the clients denied most. It runs on the decision path: it must be quick and must not throw.
	 */
	public void setDenialListener(DenialListener listener) {
		this.answers.setDenialListener(listener);
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
