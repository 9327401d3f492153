package io.windowlimiter.core.policy;

import java.time.Duration;

import io.windowlimiter.core.algorithm.WindowPolicy;
import org.jspecify.annotations.Nullable;

/**
 * One limit of a route or plan, with the name clients see for it in {@code RateLimit-Policy}.
 *
 * @param name the policy's name, unique within its route or plan
 * @param policy the limit and how it is counted
 * @param scope the scope whose counters the limit shares with every route naming it; null when the limit
 * counts for its route alone
 * @param blockFor the penalty ({@code block-for}): how long a client this limit refuses is refused on the
 * route, whatever the window; {@link Duration#ZERO} for none
 */
public record RouteLimit(String name, WindowPolicy policy, @Nullable String scope, Duration blockFor) {

	/** A limit without a penalty. */
	public RouteLimit(String name, WindowPolicy policy, @Nullable String scope) {
		this(name, policy, scope, Duration.ZERO);
	}

	/** A limit of its route alone. */
	public RouteLimit(String name, WindowPolicy policy) {
		this(name, policy, null);
	}

	/** This limit under another name, penalty kept. */
	public RouteLimit named(String other) {
		return new RouteLimit(other, this.policy, this.scope, this.blockFor);
	}

	/** This limit counted in another scope, penalty kept. */
	public RouteLimit inScope(@Nullable String other) {
		return new RouteLimit(this.name, this.policy, other, this.blockFor);
	}

}
