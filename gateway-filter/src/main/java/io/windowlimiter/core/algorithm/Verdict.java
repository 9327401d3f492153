package io.windowlimiter.core.algorithm;

import java.util.ArrayList;
import java.util.List;

/**
 * The answer for one request against all of its route's limits: allowed only if every limit allowed,
 * and then counted by every limit.
 *
 * @param allowed whether the request may pass
 * @param decisions one per limit, in the route's order
 * @param holdMillis how long to hold an allowed request before it passes: its slot, reserved in Redis, lies
 * that far ahead (a route with {@code max-delay}); 0 to pass at once
 */
public record Verdict(boolean allowed, List<Decision> decisions, long holdMillis) {

	/** A verdict that passes at once when allowed. */
	public Verdict(boolean allowed, List<Decision> decisions) {
		this(allowed, decisions, 0);
	}

	/**
	 * Reads the decide script's reply: {allowed, then allowed, remaining, reset, retry-after per limit}, and
	 * on a route with a max-delay the time the request was counted at (its slot) and the hold in ms.
	 */
	static Verdict fromReply(List<Long> reply, int limits) {
		boolean held = reply.size() == 3 + 4 * limits;
		if (reply.size() != 1 + 4 * limits && !held) {
			throw new IllegalStateException("Expected " + (1 + 4 * limits) + " numbers from the script, got " + reply);
		}
		List<Decision> decisions = new ArrayList<>(limits);
		for (int i = 0; i < limits; i++) {
			int at = 1 + 4 * i;
			decisions.add(new Decision(reply.get(at) == 1L, reply.get(at + 1), reply.get(at + 2), reply.get(at + 3)));
		}
		return new Verdict(reply.get(0) == 1L, List.copyOf(decisions), held ? reply.get(2 + 4 * limits) : 0);
	}

	/**
	 * How long a denied client must wait: the longest wait of the limits that denied it, or
	 * {@link Decision#NEVER} when one of them can never allow the request.
	 */
	public long retryAfterMillis() {
		if (this.decisions.stream().anyMatch(Decision::never)) {
			return Decision.NEVER;
		}
		return this.decisions.stream().mapToLong(Decision::retryAfterMillis).max().orElse(0);
	}

	/**
	 * The limit to report to the client: when denied, the one that makes it wait longest (one that never
	 * allows first); else the one closest to running out.
	 */
	public int reported() {
		int best = 0;
		for (int i = 1; i < this.decisions.size(); i++) {
			Decision candidate = this.decisions.get(i);
			Decision current = this.decisions.get(best);
			boolean better = this.allowed ? candidate.remaining() < current.remaining()
					: !current.never() && (candidate.never() || candidate.retryAfterMillis() > current.retryAfterMillis());
			best = better ? i : best;
		}
		return best;
	}

	/** The reported limit's decision; when denied, with the longest wait, after which every limit allows. */
	public Decision reportedDecision() {
		Decision decision = this.decisions.get(reported());
		return this.allowed ? decision
				: new Decision(false, decision.remaining(), decision.resetMillis(), retryAfterMillis());
	}

	/** The positions of the limits that denied the request. */
	public List<Integer> denying() {
		List<Integer> denying = new ArrayList<>();
		for (int i = 0; i < this.decisions.size(); i++) {
			if (!this.decisions.get(i).allowed()) {
				denying.add(i);
			}
		}
		return denying;
	}

}
