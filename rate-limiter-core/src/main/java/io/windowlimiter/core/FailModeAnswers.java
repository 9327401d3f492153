package io.windowlimiter.core;

import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.RateLimitMetrics.Outcome;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.core.policy.RouteLimit;
import reactor.core.publisher.Mono;

/**
 * What a route's {@code fail-mode} answers when Redis cannot decide a request: {@code open} lets it through,
 * {@code closed} refuses it for a second, {@code local} decides it by this instance's share of each limit, in
 * memory.
 */
final class FailModeAnswers {

	/** Fail-mode closed: denied, retry in a second, when Redis may well be back. */
	private static final Decision CLOSED_DENIAL = new Decision(false, 0, 1_000, 1_000);

	private final LocalWindowLimiter localLimiter;

	private final Answers answers;

	private final RateLimitMetrics metrics;

	private final Clock clock;

	/**
	 * @param localLimiter decides for routes in fail-mode {@code local} while Redis is away
	 * @param clock this instance's clock, used only by the local limiter
	 */
	FailModeAnswers(LocalWindowLimiter localLimiter, Answers answers, RateLimitMetrics metrics, Clock clock) {
		this.localLimiter = localLimiter;
		this.answers = answers;
		this.metrics = metrics;
		this.clock = clock;
	}

	/** What the route's fail-mode answers for a request costing {@code cost} of every limit (-1: the route's). */
	Admission answer(String routeId, CompiledPolicy policy, String id, List<String> keys, long cost) {
		long[] costs = new long[policy.limits.size()];
		Arrays.fill(costs, (cost < 0) ? policy.route.cost() : cost);
		return answer(routeId, policy, id, keys, costs);
	}

	/** What the route's fail-mode answers for a request costing {@code costs[i]} of limit i. */
	Admission answer(String routeId, CompiledPolicy policy, String id, List<String> keys, long[] costs) {
		return switch (policy.route.failMode()) {
			case OPEN -> {
				this.metrics.decision(routeId, policy.algorithms, Outcome.ERROR);
				yield new Admission(true, Map.of(), List.of(), Long.MAX_VALUE);
			}
			case CLOSED -> {
				this.metrics.decision(routeId, policy.algorithms, Outcome.FALLBACK);
				yield this.answers.answer(policy, policy.reported, 0, CLOSED_DENIAL, false, List.of());
			}
			case LOCAL -> {
				this.metrics.decision(routeId, policy.algorithms, Outcome.FALLBACK);
				yield local(policy, id, keys, costs);
			}
		};
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
		Admission admission = this.answers.answer(policy, policy.shares, verdict.reported(), verdict.reportedDecision(),
				verdict.allowed(), violated)
			.withStatus(verdict.allowed() ? 0 : Answers.quotaStatus(policy, verdict.denying()));
		if (policy.concurrency.length == 0 || !verdict.allowed()) {
			return admission;
		}
		List<String> slots = policy.concurrencyKeys(keys);
		// taken in this instance's memory: released there, wherever Redis is by then
		return admission.withSlots(new Slots(() -> Mono.fromRunnable(() -> this.localLimiter.release(slots))));
	}

}
