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
 * @param countsTokens whether the limit counts the tokens of LLM calls ({@code unit: tokens}): such a limit
 * takes a call's token estimate on a route that meters them, and is left out on any other route; else it
 * counts requests ({@code unit: requests}, the default), each the route's cost
 */
public record RouteLimit(String name, WindowPolicy policy, @Nullable String scope, Duration blockFor,
		boolean countsTokens) {

	/** A limit of requests. */
	public RouteLimit(String name, WindowPolicy policy, @Nullable String scope, Duration blockFor) {
		this(name, policy, scope, blockFor, false);
	}

	/** A limit of requests without a penalty. */
	public RouteLimit(String name, WindowPolicy policy, @Nullable String scope) {
		this(name, policy, scope, Duration.ZERO);
	}

	/** A limit of requests of its route alone. */
	public RouteLimit(String name, WindowPolicy policy) {
		this(name, policy, null);
	}

	/** This limit under another name, penalty and unit kept. */
	public RouteLimit named(String other) {
		return new RouteLimit(other, this.policy, this.scope, this.blockFor, this.countsTokens);
	}

	/** This limit counted in another scope, penalty and unit kept. */
	public RouteLimit inScope(@Nullable String other) {
		return new RouteLimit(this.name, this.policy, other, this.blockFor, this.countsTokens);
	}

	/**
	 * What the limit counts, as an override on an LLM route replaces limits: token limits, requests in flight
	 * (a concurrency limit) and other request limits are three kinds.
	 */
	public Kind kind() {
		return this.countsTokens ? Kind.TOKENS : this.policy.algorithm().countsRequests() ? Kind.IN_FLIGHT : Kind.REQUESTS;
	}

	/** What a limit counts. */
	public enum Kind {

		/** Tokens of LLM calls ({@code unit: tokens}). */
		TOKENS,
		/** Requests per window. */
		REQUESTS,
		/** Requests in flight at once ({@code algorithm: concurrency}). */
		IN_FLIGHT

	}

}
