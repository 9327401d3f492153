package io.windowlimiter.core;

import java.time.Clock;
import java.util.List;
import java.util.function.BiFunction;

import io.windowlimiter.core.access.Access;
import io.windowlimiter.core.access.ClientAccess;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.RouteArgs;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.metering.LlmPrices;
import io.windowlimiter.metering.TokenEstimate;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Decides whether a request may pass: the client's key on the route, its access (lists, blocks, exemptions),
 * the policy deciding it (see {@link PlanSource}), the request's cost against that policy's limits, a denial
 * the deny cache remembers, then Redis's verdict through {@link RedisDecisions}, or the route's fail-mode when
 * Redis cannot decide. What was allowed is reserved, to settle.
 */
final class Admissions {

	/**
	 * How long a remembered refusal by a token limit is trusted before an LLM call's body is read: calls of the
	 * client settled on another instance may have given tokens back since, which this instance does not see.
	 */
	static final long TOKEN_DENIAL_TRUSTED_MILLIS = 1_000;

	private final Targets targets;

	private final PlanSource plans;

	private final RedisDecisions redis;

	private final DenyCache denyCache;

	private final Answers answers;

	private final FailModeAnswers failMode;

	private final ReservationsHere reservationsHere;

	private final Leases leases;

	private final Clock clock;

	private volatile ClientAccess access = ClientAccess.NONE;

	private volatile HeldRequests held = new HeldRequests(HeldRequests.DEFAULT_MAX);

	/**
	 * @param reservationsHere where an allowed request's reservation of a cost per limit is kept until settled
	 * @param leases the parts of hot clients' quotas leased here, on routes with a {@code lease}
	 * @param clock this instance's clock, for calendar periods and reservations
	 */
	Admissions(Targets targets, PlanSource plans, RedisDecisions redis, DenyCache denyCache, Answers answers,
			FailModeAnswers failMode, ReservationsHere reservationsHere, Leases leases, Clock clock) {
		this.targets = targets;
		this.plans = plans;
		this.redis = redis;
		this.denyCache = denyCache;
		this.answers = answers;
		this.failMode = failMode;
		this.reservationsHere = reservationsHere;
		this.leases = leases;
		this.clock = clock;
	}

	/** See {@link RateLimiterCore#setClientAccess}. */
	void setClientAccess(ClientAccess access) {
		this.access = access;
	}

	/** See {@link RateLimiterCore#setHeldRequests}. */
	void setHeldRequests(HeldRequests held) {
		this.held = held;
	}

	/** See {@link RateLimiterCore#admit(String, String, long, Mono)}. */
	Mono<Admission> admit(String routeId, String clientKey, long cost, Mono<String> requestedPlan) {
		return admit(routeId, clientKey, requestedPlan, true, (policy, id) -> decide(routeId, policy, id, cost));
	}

	/** See {@link RateLimiterCore#admitTokens}. */
	Mono<Admission> admitTokens(String routeId, String clientKey, long estimatedTokens, @Nullable String model,
			Mono<String> requestedPlan) {
		return admitCall(routeId, clientKey, new TokenEstimate(estimatedTokens, 0, estimatedTokens), model, requestedPlan);
	}

	/** See {@link RateLimiterCore#admitCall}. */
	Mono<Admission> admitCall(String routeId, String clientKey, TokenEstimate estimate, @Nullable String model,
			Mono<String> requestedPlan) {
		return admit(routeId, clientKey, requestedPlan, true, (policy, id) -> {
			// the limits of other models than the call's are left out: their keys untouched
			CompiledPolicy counting = policy.forModel(model);
			if (counting.moneyLimits.length == 0) {
				return decideEach(routeId, counting, id, counting.costsOfCall(estimate.tokens()), null);
			}
			// a model without a price is refused before (RateLimiterCore.unpriced); one priced meanwhile by no entry
			// reserves the most its money limits allow, and is settled to the same
			LlmPrices.Price price = this.targets.prices().priceOf(model);
			long money = (price != null)
					? LlmPrices.estimateMicroDollars(price, estimate.promptTokens(), estimate.outputTokens())
					: Long.MAX_VALUE;
			return decideEach(routeId, counting, id, counting.costsOfCall(estimate.tokens(), money), price);
		});
	}

	/** See {@link RateLimiterCore#knownRefusal}. */
	Mono<Admission> knownRefusal(String routeId, String clientKey, long bodyLength, int bytesPerToken,
			Mono<String> requestedPlan) {
		// the least the call's estimate can be: its prompt's part, from the body's declared length
		long least = (bodyLength > 0) ? (bodyLength + bytesPerToken - 1) / bytesPerToken : 1;
		// an exempt client is answered (and counted) once, by the admission
		return admit(routeId, clientKey, requestedPlan, false, (policy, id) -> Mono.defer(() -> {
			Admission refusal = remembered(routeId, policy, id, least);
			return (refusal != null) ? ReadyAnswer.of(refusal) : Mono.empty();
		}));
	}

	/** The deny cache's refusal of an LLM call estimated at {@code leastTokens} or more; null when Redis decides. */
	private @Nullable Admission remembered(String routeId, CompiledPolicy policy, String id, long leastTokens) {
		if (policy.route.shadow()) {
			return null;
		}
		DenyCache.Denial denial = this.denyCache.denial(DenyCache.keyOf(policy, policy.keysFor(id)));
		if (denial == null || denial.limitIndex() >= policy.limits.size()) {
			return null;
		}
		if (policy.limits.get(denial.limitIndex()).model() != null || policy.limits.get(denial.limitIndex()).countsMoney()) {
			// before the body is read the call's model is unknown: a limit of some models may not count it, and a
			// smaller call (or a cheaper model) may fit what a money limit has left
			return null;
		}
		if (policy.limits.get(denial.limitIndex()).countsTokens()) {
			long least = policy.costsOfCall(leastTokens)[denial.limitIndex()];
			if (denial.decision().remaining() >= least || denial.ageMillis() > TOKEN_DENIAL_TRUSTED_MILLIS) {
				return null;
			}
		}
		return this.answers.denied(routeId, policy, id, denial, -1, this.clock.millis());
	}

	/**
	 * What both kinds of admission (and the refusal known before a body is read) share: the client's key as the
	 * core knows it from here on (on a route keyed by credentials its hash, see {@link CredentialRoutes}); a
	 * client the route's lists or scopes decide is answered without Redis; anyone else is decided by
	 * {@code decide} under the policy its assignment or its request names, with that key.
	 * @param answersExempt whether an exempt client is answered here; else its answer is empty
	 */
	private Mono<Admission> admit(String routeId, String clientKey, Mono<String> requestedPlan, boolean answersExempt,
			BiFunction<CompiledPolicy, String, Mono<Admission>> decide) {
		CompiledRoute route = this.targets.route(routeId);
		if (route == null) {
			return Mono.error(new IllegalStateException("Route '" + routeId + "' has no rate limits"));
		}
		String id = this.targets.idOf(routeId, clientKey);
		Access access = this.access.of(routeId, route.scopes, route.lists, id, this.targets.listHash(routeId, clientKey));
		if (access != null) {
			// not Mono.just: see ReadyAnswer
			return (access.exempt() && !answersExempt) ? Mono.empty() : ReadyAnswer.of(byAccess(routeId, route, access));
		}
		CompiledPolicy policy = this.plans.known(routeId, route, id);
		if (policy != null) {
			return decide.apply(policy, id);
		}
		return this.plans.fromRequest(routeId, route, id, requestedPlan).flatMap(known -> decide.apply(known, id));
	}

	private Admission byAccess(String routeId, CompiledRoute route, Access access) {
		return this.answers.byAccess(routeId, route, access, access.exempt() ? 0 : this.access.millisLeft(access));
	}

	/**
	 * Why the client is exempt or refused on the target whatever its quota, for operators: on a route, as a
	 * request would be decided; on a scope, the operator's rule made there. Null when its limits decide.
	 * @param clientKey the client's key as the core knows it on the target ({@link Targets#clientKeyOf})
	 */
	@Nullable Access accessOf(String target, String clientKey) {
		if (this.targets.scopeRoutes(target) != null) {
			return this.access.rule(target, clientKey);
		}
		CompiledRoute route = this.targets.route(target);
		// as a request of the client is decided: its hash against the lists' entries, hashed too
		return (route != null) ? this.access.of(target, route.scopes, route.lists, clientKey,
				this.targets.listHash(target, clientKey)) : null;
	}

	/** Decides a request costing {@code costs[i]} of limit i of the client's policy, laid out by that policy. */
	private Mono<Admission> decideEach(String routeId, CompiledPolicy policy, String id, long[] costs,
			LlmPrices.@Nullable Price price) {
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
		return this.redis.verdict(routeId, policy, id, keys, arguments, requestId)
			.map(verdict -> this.answers.verdict(routeId, id, policy, DenyCache.keyOf(policy, keys), cost, costs, verdict,
					verdict.allowed() ? reservedHere(new Reservation(routeId, policy, keys, cost, costs, verdict.now(),
							verdict.decisions(), requestId, price)) : null))
			.onErrorResume(error -> ReadyAnswer.of(this.failMode.answer(routeId, policy, id, keys, costs)));
	}

	/** Kept until settled: {@link Settles} takes it out, whichever way the settle goes. */
	private Reservation reservedHere(Reservation reservation) {
		this.reservationsHere.add(reservation, this.clock.millis());
		return reservation;
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
		String cacheKey = DenyCache.keyOf(policy, keys);
		if (policy.leases) {
			return leased(routeId, policy, id, cost, keys, arguments, cacheKey, requestId, false);
		}
		DenyCache.Denial denial = policy.route.shadow() ? null : this.denyCache.denial(cacheKey, cost);
		if (denial != null) {
			// not Mono.just: see ReadyAnswer (a Reactor Netty keep-alive hang)
			return ReadyAnswer.of(this.answers.denied(routeId, policy, id, denial, cost, this.clock.millis()));
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
		return answered(routeId, policy, id, cost, keys, cacheKey, requestId,
				this.redis.verdict(routeId, policy, id, keys, arguments, requestId));
	}

	/** The answer to Redis's verdict on a request of {@code cost}; the fail-mode's when Redis could not decide. */
	private Mono<Admission> answered(String routeId, CompiledPolicy policy, String id, long cost, List<String> keys,
			String cacheKey, long requestId, Mono<Verdict> verdict) {
		return verdict
			.map(decided -> this.answers.verdict(routeId, id, policy, cacheKey, cost, decided,
					reservation(routeId, policy, keys, cost, decided, requestId)))
			.onErrorResume(error -> ReadyAnswer.of(this.failMode.answer(routeId, policy, id, keys, cost)));
	}

	/**
	 * A request on a policy that leases ({@link Leases}): admitted from its client's part when this instance holds
	 * one; else refused by the deny cache, or decided by Redis alone, or with a part for the client's next requests.
	 * @param waited whether it waited for a part another request of the client was taking
	 */
	private Mono<Admission> leased(String routeId, CompiledPolicy policy, String id, long cost, List<String> keys,
			LimitScript.Arguments arguments, String cacheKey, long requestId, boolean waited) {
		Leases.Step step = this.leases.next(routeId, policy, cacheKey, cost, waited);
		if (step instanceof Leases.Local local) {
			// not Mono.just: see ReadyAnswer
			return ReadyAnswer.of(this.answers.verdict(routeId, id, policy, cacheKey, cost, local.verdict(), null));
		}
		if (step instanceof Leases.Wait wait) {
			return wait.taken()
				.then(Mono.defer(() -> leased(routeId, policy, id, cost, keys, arguments, cacheKey, requestId, true)));
		}
		DenyCache.Denial denial = this.denyCache.denial(cacheKey, cost);
		if (denial != null) {
			if (step instanceof Leases.Take take) {
				take.failed();
			}
			return ReadyAnswer.of(this.answers.denied(routeId, policy, id, denial, cost, this.clock.millis()));
		}
		if (step instanceof Leases.Take take) {
			return withPart(routeId, policy, id, cost, keys, arguments, cacheKey, requestId, take);
		}
		long sent = this.leases.now();
		return answered(routeId, policy, id, cost, keys, cacheKey, requestId,
				this.redis.verdict(routeId, policy, id, keys, arguments, requestId)
					.doOnNext(verdict -> this.leases.decided(policy, cacheKey, verdict, sent)));
	}

	/**
	 * The request decided with a part for its client's next requests, in one script call at its cost plus the part.
	 * Sent and recorded whether or not the request still waits (its client may go): a part Redis reserved is
	 * always known here, so given back, and the client's requests waiting for it always go on.
	 */
	private Mono<Admission> withPart(String routeId, CompiledPolicy policy, String id, long cost, List<String> keys,
			LimitScript.Arguments arguments, String cacheKey, long requestId, Leases.Take take) {
		Mono<Admission> answer = this.redis.verdict(routeId, policy, id, keys, arguments.withCost(cost + take.part), requestId)
			.<Admission>flatMap(verdict -> {
				if (verdict.allowed()) {
					Reservation both = new Reservation(routeId, policy, keys, cost + take.part, null, verdict.now(),
							verdict.decisionsFromNow(), requestId, null);
					return Mono.just(this.answers.verdict(routeId, id, policy, cacheKey, cost,
							take.taken(policy, verdict, both), null));
				}
				// Redis has less left than the part: the request alone may still fit
				take.refused(policy, routeId, verdict);
				return fromRedis(routeId, policy, id, cost, keys, arguments, cacheKey, requestId);
			})
			.onErrorResume(error -> {
				take.failed();
				return ReadyAnswer.of(this.failMode.answer(routeId, policy, id, keys, cost));
			})
			.cache();
		answer.subscribe(admission -> {
		}, error -> {
		});
		return answer;
	}

	/** What Redis counted for an allowed request, to settle; null when it counted nothing. */
	private static @Nullable Reservation reservation(String routeId, CompiledPolicy policy, List<String> keys,
			long cost, Verdict verdict, long requestId) {
		return (verdict.allowed() && cost > 0)
				? new Reservation(routeId, policy, keys, cost, null, verdict.now(), verdict.decisionsFromNow(), requestId) : null;
	}

	/** The most a request may cost under the policy: what its smallest limit (or burst) allows at once. */
	private static long maxCost(CompiledPolicy policy) {
		long max = Long.MAX_VALUE;
		for (RouteLimit limit : policy.limits) {
			if (limit.policy().algorithm().countsRequests() || limit.countsTokens() || limit.countsMoney()) {
				continue;
			}
			max = Math.min(max, Math.min(limit.policy().limit(), limit.policy().burst()));
		}
		return max;
	}

}
