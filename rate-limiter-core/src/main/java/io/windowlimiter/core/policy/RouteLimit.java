package io.windowlimiter.core.policy;

import io.windowlimiter.core.algorithm.WindowPolicy;
import org.jspecify.annotations.Nullable;

/**
 * One limit of a route or plan, with the name clients see for it in {@code RateLimit-Policy}.
 *
 * @param name the policy's name, unique within its route or plan
 * @param policy the limit and how it is counted
 * @param scope the scope whose counters the limit shares with every route naming it; null when the limit
 * counts for its route alone
 */
public record RouteLimit(String name, WindowPolicy policy, @Nullable String scope) {

	/** A limit of its route alone. */
	public RouteLimit(String name, WindowPolicy policy) {
		this(name, policy, null);
	}

}
