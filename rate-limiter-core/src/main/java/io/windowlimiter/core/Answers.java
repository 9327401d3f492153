package io.windowlimiter.core;

import java.util.List;
import java.util.Map;

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
			admission = admission.withSlots(new Slots(() -> this.releases.release(reservation)));
		}
		return (verdict.holdMillis() > 0) ? admission.withDelay(verdict.holdMillis()) : admission;
	}

	/** The refusal the deny cache remembers for the client, answered without Redis. */
	Admission denied(String routeId, CompiledPolicy policy, String id, DenyCache.Denial denial) {
		this.metrics.decision(routeId, policy.algorithms, Outcome.DENIED);
		this.denialListener.denied(routeId, id);
		return answer(policy, policy.reported, denial.limitIndex(), denial.decision())
			.withStatus(quotaStatus(policy, List.of(denial.limitIndex())));
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
