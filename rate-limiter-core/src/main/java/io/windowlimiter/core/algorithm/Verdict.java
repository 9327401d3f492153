package io.windowlimiter.core.algorithm;

import java.util.ArrayList;
import java.util.List;

/**
 * The answer for one request against all of its route's limits: allowed only if every limit allowed,
 * and then counted by every limit.
 *
 * @param allowed whether the request may pass
 * @param decisions one per limit, in the route's order
 * @param blockedMillis how long the client's penalty ({@code block-for}) still refuses it on the route, 0
 * when none
 * @param now the time the request was counted at, in ms since the epoch (Redis's clock unless the caller gave
 * one; on a route with a max-delay its slot): where a reservation was counted, for settling it
 * @param holdMillis how long to hold an allowed request before it passes: its slot, reserved in Redis, lies
 * that far ahead (a route with {@code max-delay}); 0 to pass at once
 */
public record Verdict(boolean allowed, List<Decision> decisions, long blockedMillis, long now, long holdMillis) {

	/**
	 * Reads the decide script's reply: {allowed, then allowed, remaining, reset, retry-after per limit, then
	 * when the decision had a block key the block's time left, then the time decided at}, or on a route with
	 * a max-delay {..., the time counted at (the slot), the hold in ms}.
	 * @param keys the decision's keys: one per limit, then the block key when it has a penalty
	 */
	static Verdict fromReply(List<Long> reply, int keys) {
		// with a penalty: 1 + 4 (keys - 1) + 1 + 1 numbers; with a max-delay: 1 + 4 keys + 2; else 1 + 4 keys + 1
		boolean penalty = reply.size() == 4 * keys - 1;
		boolean held = reply.size() == 3 + 4 * keys;
		int limits = penalty ? keys - 1 : keys;
		if (!penalty && !held && reply.size() != 2 + 4 * limits) {
			throw new IllegalStateException("Expected " + (2 + 4 * limits) + " numbers from the script, got " + reply);
		}
		List<Decision> decisions = new ArrayList<>(limits);
		for (int i = 0; i < limits; i++) {
			int at = 1 + 4 * i;
			decisions.add(new Decision(reply.get(at) == 1L, reply.get(at + 1), reply.get(at + 2), reply.get(at + 3)));
		}
		long now = held ? reply.get(1 + 4 * limits) : reply.get(reply.size() - 1);
		return new Verdict(reply.get(0) == 1L, List.copyOf(decisions), penalty ? reply.get(1 + 4 * limits) : 0, now,
				held ? reply.get(2 + 4 * limits) : 0);
	}

	/**
	 * The decisions with each reset counted from {@link #now()}, where a settle reads it. The script gives
	 * resets from the time it decided, which for a held request is its hold before the slot it was counted
	 * at; read from the slot, they would place the reservation a hold later than it landed: a refund of bucket
	 * time the client no longer owed, or from a window it was not counted in. The hold is rounded up, so a
	 * reset is never moved later than where the reservation landed.
	 */
	public List<Decision> decisionsFromNow() {
		if (this.holdMillis == 0) {
			return this.decisions;
		}
		return this.decisions.stream()
			.map(decision -> new Decision(decision.allowed(), decision.remaining(),
					Math.max(0, decision.resetMillis() - this.holdMillis), decision.retryAfterMillis()))
			.toList();
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
