package io.windowlimiter.core;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.windowlimiter.core.RateLimitMetrics.Outcome;
import io.windowlimiter.core.RateLimiterCore.DenialListener;
import io.windowlimiter.core.access.Access;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.core.policy.CompiledRoute;
import org.jspecify.annotations.Nullable;

/**
 * Turns what decided a request (Redis's verdict, a denial remembered, the client's access) into the
 * {@link Admission} an adapter sends: its headers, its status, the limits that refused it and what it holds to
 * release; and tells what it answered to the metrics, the deny cache, the near-limit log and the denial listener.
 */
final class Answers {

	/** What an exempt or allow-listed client gets: through, no limit asked, so no rate-limit headers. */
	private static final Admission EXEMPT = new Admission(true, Map.of(), List.of());

	private final RateLimitHeaders headers;

	private final RateLimitMetrics metrics;

	private final DenyCache denyCache;

	private final SlotReleases releases;

	private volatile DenialListener denialListener = DenialListener.NONE;

	private volatile NearLimit nearLimit = NearLimit.OFF;

	Answers(RateLimitHeaders headers, RateLimitMetrics metrics, DenyCache denyCache, SlotReleases releases) {
		this.headers = headers;
		this.metrics = metrics;
		this.denyCache = denyCache;
		this.releases = releases;
	}

	/** See {@link RateLimiterCore#setDenialListener}. */
	void setDenialListener(DenialListener listener) {
		this.denialListener = listener;
	}

	/** See {@link RateLimiterCore#setNearLimit}. */
	void setNearLimit(NearLimit nearLimit) {
		this.nearLimit = nearLimit;
	}

	/**
	 * The answer to Redis's verdict: a refusal is remembered in the deny cache (unless the route is a shadow),
	 * and an allowed request holding concurrency slots carries their release.
	 * @param cacheKey the client's key in the deny cache ({@link DenyCache#keyOf})
	 * @param reservation what Redis counted for the request, to settle; null for nothing
	 */
	Admission verdict(String routeId, String id, CompiledPolicy policy, String cacheKey, long cost, Verdict verdict,
			@Nullable Reservation reservation) {
		return verdict(routeId, id, policy, cacheKey, cost, null, verdict, reservation);
	}

	/**
	 * As {@link #verdict(String, String, CompiledPolicy, String, long, Verdict, Reservation)}, for a request costing
	 * each limit its own: an LLM call, whose answer carries its quotas by unit ({@link LlmQuotas}).
	 * @param costs what the request cost each limit; null when {@code cost} is every limit's
	 */
	Admission verdict(String routeId, String id, CompiledPolicy policy, String cacheKey, long cost,
			long @Nullable [] costs, Verdict verdict, @Nullable Reservation reservation) {
		// a concurrency limit counts calls in flight, not requests per window: while the request passes, the
		// headers tell the quota closest to running out (X-RateLimit-Limit: 2 read as a request quota misleads)
		int reported = verdict.allowed() ? closestQuota(policy, verdict) : verdict.reported();
		Decision reportedDecision = verdict.allowed() ? verdict.decisions().get(reported) : verdict.reportedDecision();
		boolean shadow = policy.route.shadow();
		// a refusal for want of a slot is not remembered: a slot freed on another instance (a release this one does
		// not see) lets the client in at once; every other refusal stays true until its Retry-After
		if (!verdict.allowed() && !shadow && !policy.policies.get(reported).algorithm().countsRequests()) {
			this.denyCache.remember(cacheKey, reported, reportedDecision.remaining(), verdict.retryAfterMillis(), cost);
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
		Admission admission = answer(policy, policy.reported, reported, reportedDecision, verdict.allowed(), violated)
			.withStatus(verdict.allowed() ? 0 : quotaStatus(policy, verdict.denying()))
			.withReservation(reservation);
		if (policy.tokenLimits.length > 0 || policy.moneyLimits.length > 0) {
			List<Decision> decisions = verdict.allowed() ? verdict.decisions() : uncounted(verdict.decisions(), costs, cost);
			admission = admission.withQuotas(quotas(policy, decisions, verdict.now(),
					verdict.allowed() ? null : refusal(policy, reported, reportedDecision, (costs != null) ? costs[reported] : cost)));
		}
		if (reservation != null && policy.concurrency.length > 0) {
			admission = admission.withSlots(new Slots(() -> this.releases.release(reservation)));
		}
		return (verdict.holdMillis() > 0) ? admission.withDelay(verdict.holdMillis()) : admission;
	}

	/**
	 * The refusal the deny cache remembers for the client, answered without Redis.
	 * @param asked what the request asks of the limit that refused it, as far as known; -1 when not known
	 * @param nowMillis this instance's now, ms since the epoch: where the remembered wait is counted from
	 */
	Admission denied(String routeId, CompiledPolicy policy, String id, DenyCache.Denial denial, long asked,
			long nowMillis) {
		this.metrics.decision(routeId, policy.algorithms, Outcome.DENIED);
		this.denialListener.denied(routeId, id);
		int refusing = denial.limitIndex();
		Admission admission = answer(policy, policy.reported, refusing, denial.decision())
			.withStatus(quotaStatus(policy, List.of(refusing)));
		if (policy.tokenLimits.length == 0 && policy.moneyLimits.length == 0) {
			return admission;
		}
		// only the limit that refused is known: the headers of its unit, from what the cache remembers
		Decision decision = denial.decision();
		LlmQuotas.Quota quota = new LlmQuotas.Quota(RateLimitHeaders.quota(policy.policies.get(refusing)),
				decision.remaining(), decision.resetMillis(), nowMillis);
		boolean tokens = policy.limits.get(refusing).countsTokens();
		boolean money = policy.limits.get(refusing).countsMoney();
		boolean concurrency = policy.policies.get(refusing).algorithm().countsRequests();
		return admission.withQuotas(new LlmQuotas((tokens || money || concurrency) ? null : quota, tokens ? quota : null,
				refusal(policy, refusing, decision, asked), money ? quota : null));
	}

	/**
	 * The decisions of a refused request as they stand: a limit that would have taken it answers what it would
	 * have left after it, but a refusal counts nothing in any limit (all or nothing), so its cost is still there.
	 */
	private static List<Decision> uncounted(List<Decision> decisions, long @Nullable [] costs, long cost) {
		return IntStream.range(0, decisions.size()).mapToObj(i -> {
			Decision decision = decisions.get(i);
			return decision.allowed() ? new Decision(true, decision.remaining() + ((costs != null) ? costs[i] : cost),
					decision.resetMillis(), decision.retryAfterMillis()) : decision;
		}).toList();
	}

	/** The limit closest to running out among those that are quotas per window; any limit when none is. */
	static int closestQuota(CompiledPolicy policy, Verdict verdict) {
		int best = -1;
		List<Decision> decisions = verdict.decisions();
		for (int i = 0; i < decisions.size(); i++) {
			if (!policy.policies.get(i).algorithm().countsRequests()
					&& (best < 0 || decisions.get(i).remaining() < decisions.get(best).remaining())) {
				best = i;
			}
		}
		return (best >= 0) ? best : verdict.reported();
	}

	/**
	 * An LLM call's quotas by unit: the request limit (not a concurrency limit) and the token limit with least
	 * left, as the providers' headers tell the tightest of their limits.
	 */
	static LlmQuotas quotas(CompiledPolicy policy, List<Decision> decisions, long atMillis,
			LlmQuotas.@Nullable Refusal refusal) {
		int requests = -1;
		int tokens = -1;
		int money = -1;
		for (int i = 0; i < decisions.size(); i++) {
			if (policy.limits.get(i).countsTokens()) {
				tokens = lessLeft(decisions, tokens, i);
			}
			else if (policy.limits.get(i).countsMoney()) {
				money = lessLeft(decisions, money, i);
			}
			else if (!policy.policies.get(i).algorithm().countsRequests()) {
				requests = lessLeft(decisions, requests, i);
			}
		}
		return new LlmQuotas(quota(policy, decisions, requests, atMillis), quota(policy, decisions, tokens, atMillis),
				refusal, quota(policy, decisions, money, atMillis));
	}

	private static int lessLeft(List<Decision> decisions, int best, int candidate) {
		return (best < 0 || decisions.get(candidate).remaining() < decisions.get(best).remaining()) ? candidate : best;
	}

	private static LlmQuotas.@Nullable Quota quota(CompiledPolicy policy, List<Decision> decisions, int at,
			long atMillis) {
		if (at < 0) {
			return null;
		}
		Decision decision = decisions.get(at);
		return new LlmQuotas.Quota(RateLimitHeaders.quota(policy.policies.get(at)), Math.max(0, decision.remaining()),
				decision.resetMillis(), atMillis);
	}

	/** The limit at {@code at} refusing a call that asked it {@code asked}, with the call's overall wait. */
	private static LlmQuotas.Refusal refusal(CompiledPolicy policy, int at, Decision decision, long asked) {
		return new LlmQuotas.Refusal(policy.limits.get(at).name(), policy.limits.get(at).countsTokens(),
				policy.policies.get(at).algorithm().countsRequests(), RateLimitHeaders.quota(policy.policies.get(at)),
				policy.policies.get(at).windowMillis(), decision.remaining(), asked, decision.retryAfterMillis(),
				policy.limits.get(at).countsMoney());
	}

	/**
	 * A listed, blocked or exempt client, answered without Redis: exempt passes with no headers (no limit was
	 * asked); refused is a 403 whose Retry-After is the time left of an operator's block, and absent for a
	 * deny list's refusal, which no wait ends.
	 * @param left the time left of an operator's block, 0 for none
	 */
	Admission byAccess(String routeId, CompiledRoute route, Access access, long left) {
		if (access.exempt()) {
			this.metrics.decision(routeId, route.byDefault.algorithms, Outcome.EXEMPT);
			return EXEMPT;
		}
		this.metrics.decision(routeId, route.byDefault.algorithms, Outcome.BLOCKED);
		Map<String, String> headers = (left > 0)
				? Map.of(RateLimitHeaders.RETRY_AFTER, Long.toString(RateLimitHeaders.ceilSeconds(left))) : Map.of();
		return new Admission(false, headers, List.of()).withStatus(Admission.FORBIDDEN);
	}

	/** The route's quota-status when one of the limits that refused is a calendar quota; else 0, the usual. */
	static int quotaStatus(CompiledPolicy policy, List<Integer> refusing) {
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
	Admission answer(CompiledPolicy policy, CompiledPolicy.Reported limits, int reported, Decision decision,
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

}
