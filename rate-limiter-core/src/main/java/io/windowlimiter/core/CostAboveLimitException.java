package io.windowlimiter.core;

import io.windowlimiter.core.policy.RouteLimit;

/**
 * A request asked to cost more than a limit of its client's policy allows at once: it could never pass,
 * so it is not sent to Redis. Adapters answer it as the client's mistake (the filter: a 400 naming where
 * the cost came from), never as a refusal to retry later.
 */
public class CostAboveLimitException extends RuntimeException {

	private final long cost;

	private final long maxCost;

	/**
	 * @param cost what the request asked to cost
	 * @param limit the first limit it does not fit
	 * @param maxCost the most any request may cost under the policy (its smallest limit or burst)
	 */
	public CostAboveLimitException(long cost, RouteLimit limit, long maxCost) {
		super("A cost of " + cost + " is more than limit '" + limit.name() + "' allows at once; at most " + maxCost,
				null, false, false);
		this.cost = cost;
		this.maxCost = maxCost;
	}

	/** What the request asked to cost. */
	public long cost() {
		return this.cost;
	}

	/** The most a request may cost under the client's policy. */
	public long maxCost() {
		return this.maxCost;
	}

}
