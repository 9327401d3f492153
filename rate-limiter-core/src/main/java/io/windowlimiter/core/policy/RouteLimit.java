package io.windowlimiter.core.policy;

import java.time.Duration;

import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.metering.ModelPattern;
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
 * @param unit what the limit counts: requests ({@code unit: requests}, the default), each the route's cost; the
 * tokens of LLM calls ({@code unit: tokens}) or their price in micro-dollars ({@code unit: usd}): such a limit
 * takes a call's estimate on a route that meters them, and is left out on any other route
 * @param model the models whose calls the limit counts ({@code model}: a name, or a pattern where {@code *}
 * stands for any run of characters, as {@code gpt-4o*}): a call whose body names another model, or none, does not
 * touch it; null for a limit counting every call
 */
public record RouteLimit(String name, WindowPolicy policy, @Nullable String scope, Duration blockFor,
		Unit unit, @Nullable String model) {

	/** A limit of tokens or requests counting every call, whatever its model. */
	public RouteLimit(String name, WindowPolicy policy, @Nullable String scope, Duration blockFor,
			boolean countsTokens) {
		this(name, policy, scope, blockFor, countsTokens ? Unit.TOKENS : Unit.REQUESTS, null);
	}

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
		return new RouteLimit(other, this.policy, this.scope, this.blockFor, this.unit, this.model);
	}

	/** This limit counted in another scope, penalty and unit kept. */
	public RouteLimit inScope(@Nullable String other) {
		return new RouteLimit(this.name, this.policy, other, this.blockFor, this.unit, this.model);
	}

	/** This limit counted by another policy (algorithm, limit, window), everything else kept. */
	public RouteLimit withPolicy(WindowPolicy other) {
		return new RouteLimit(this.name, other, this.scope, this.blockFor, this.unit, this.model);
	}

	/**
	 * Whether the limit counts only where LLM calls are metered: it counts tokens, or the calls of some models
	 * (which only a read body tells).
	 */
	public boolean needsLlm() {
		return this.unit != Unit.REQUESTS || this.model != null;
	}

	/** Whether the limit counts the tokens of LLM calls ({@code unit: tokens}). */
	public boolean countsTokens() {
		return this.unit == Unit.TOKENS;
	}

	/** Whether the limit counts the price of LLM calls, in micro-dollars ({@code unit: usd}). */
	public boolean countsMoney() {
		return this.unit == Unit.USD;
	}

	/**
	 * Whether a call naming {@code callModel} counts in this limit: always for a limit without a model; for one
	 * with a model, when the call names a model it matches (as written, case included: the upstream decides what a
	 * model name means, the gateway does not guess).
	 * @param callModel the model the call's body names; null when it names none (or not as a string)
	 */
	public boolean countsModel(@Nullable String callModel) {
		return this.model == null || (callModel != null && ModelPattern.matches(this.model, callModel));
	}

	/**
	 * What the limit counts, as an override on an LLM route replaces limits: token limits, money limits,
	 * requests in flight (a concurrency limit) and other request limits are four kinds.
	 */
	public Kind kind() {
		return switch (this.unit) {
			case TOKENS -> Kind.TOKENS;
			case USD -> Kind.MONEY;
			case REQUESTS -> this.policy.algorithm().countsRequests() ? Kind.IN_FLIGHT : Kind.REQUESTS;
		};
	}

	/** What a limit's {@code unit} says it counts. */
	public enum Unit {

		/** Requests, each the route's cost ({@code unit: requests}, the default). */
		REQUESTS("requests"),
		/** Tokens of LLM calls ({@code unit: tokens}). */
		TOKENS("tokens"),
		/** The price of LLM calls, in whole micro-dollars ({@code unit: usd}, its limit written in dollars). */
		USD("usd");

		private final String id;

		Unit(String id) {
			this.id = id;
		}

		/** As configured: {@code requests}, {@code tokens}, {@code usd}. */
		public String id() {
			return this.id;
		}

	}

	/** What a limit counts. */
	public enum Kind {

		/** Tokens of LLM calls ({@code unit: tokens}). */
		TOKENS,
		/** Money spent on LLM calls ({@code unit: usd}). */
		MONEY,
		/** Requests per window. */
		REQUESTS,
		/** Requests in flight at once ({@code algorithm: concurrency}). */
		IN_FLIGHT

	}

}
