package io.windowlimiter.core;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.metering.LlmPrices;
import org.jspecify.annotations.Nullable;

/**
 * What one admitted request holds in Redis until it is settled: its cost, counted in every limit of its
 * policy by the decision script at {@link #reservedAt()}. An adapter whose cost depends on the response hands
 * it to {@link RateLimiterCore#settle} with the actual cost; one that never does leaves the request charged
 * what was reserved (a client that disconnects before its response is charged so).
 *
 * <p>Settled at most once: a second {@code settle} of this object sends nothing, and the settle script
 * marks the reservation in Redis (see {@link #markers(long)}), so a command Redis runs twice changes nothing
 * either.
 */
public final class Reservation {

	private final String routeId;

	private final CompiledPolicy policy;

	private final List<String> keys;

	private final long cost;

	/** The cost reserved in each limit when they differ (an LLM route's tokens and requests); else null. */
	private final long @Nullable [] costs;

	private final long reservedAt;

	/** What the LLM call's model costs, for its money limits ({@code unit: usd}); null when it counts no money. */
	private final LlmPrices.@Nullable Price price;

	/** The decision of each limit when it reserved: their resets say where the reservation landed. */
	private final List<Decision> decisions;

	/**
	 * Unique among the client's reservations while markers live (two minutes at most) and among its requests
	 * in flight (a concurrency limit records it): 64 random bits, made by the gateway.
	 */
	private final long id;

	/** 1 once settled: made for every admitted request, so a field updater rather than an object more. */
	private volatile int settled;

	private static final AtomicIntegerFieldUpdater<Reservation> SETTLED = AtomicIntegerFieldUpdater
		.newUpdater(Reservation.class, "settled");

	/** Made for every request Redis counted: nothing here is worked out until a settle asks. */
	Reservation(String routeId, CompiledPolicy policy, List<String> keys, long cost, long reservedAt,
			List<Decision> decisions) {
		this(routeId, policy, keys, cost, null, reservedAt, decisions, newId());
	}

	/** @param costs the cost reserved in each limit, when they differ; null when {@code cost} is every limit's */
	Reservation(String routeId, CompiledPolicy policy, List<String> keys, long cost, long @Nullable [] costs,
			long reservedAt, List<Decision> decisions, long id) {
		this(routeId, policy, keys, cost, costs, reservedAt, decisions, id, null);
	}

	/** @param price what the call's model costs, for its money limits; null when it counts no money */
	Reservation(String routeId, CompiledPolicy policy, List<String> keys, long cost, long @Nullable [] costs,
			long reservedAt, List<Decision> decisions, long id, LlmPrices.@Nullable Price price) {
		this.price = price;
		this.id = id;
		this.routeId = routeId;
		this.policy = policy;
		this.keys = keys;
		this.cost = cost;
		this.costs = costs;
		this.reservedAt = reservedAt;
		this.decisions = decisions;
	}

	/**
	 * The model the call counted as, for the {@code model} tag of {@code gateway.ratelimit.llm.tokens}: the
	 * {@code model} of the first limit with one that counted it, as configured ({@code gpt-4o*}), else
	 * {@value RateLimitMetrics#OTHER_MODEL}. Only configured models become tag values, so no client can grow the
	 * number of meters by naming models.
	 * @param reservation the call's reservation; null (nothing reserved) is {@value RateLimitMetrics#OTHER_MODEL}
	 */
	public static String modelTag(@Nullable Reservation reservation) {
		if (reservation != null) {
			for (RouteLimit limit : reservation.policy.limits) {
				if (limit.model() != null) {
					return limit.model();
				}
			}
		}
		return RateLimitMetrics.OTHER_MODEL;
	}

	/** The route (or filter id) the request was admitted on. */
	public String routeId() {
		return this.routeId;
	}

	/** The client's keys, one per limit, in the policy's order. */
	public List<String> keys() {
		return Collections.unmodifiableList(this.keys);
	}

	/** The limits the cost was reserved in, as they were then, in the keys' order. */
	public List<WindowPolicy> policies() {
		return this.policy.policies;
	}

	/** The cost reserved in every limit (the largest, when limits were reserved different costs). */
	public long cost() {
		return this.cost;
	}

	/** The cost reserved in each limit, in the keys' order. */
	public long[] costs() {
		if (this.costs != null) {
			return this.costs.clone();
		}
		long[] costs = new long[this.keys.size()];
		Arrays.fill(costs, this.cost);
		return costs;
	}

	/** Whether limits were reserved different costs (an LLM route's tokens and requests). */
	public boolean costsDiffer() {
		return this.costs != null;
	}

	/** What limit i had left right after this reservation, as the decision script answered. */
	public long remainingAfter(int limit) {
		return this.decisions.get(limit).remaining();
	}

	/**
	 * What the token limit closest to refusing had left right after this reservation (an LLM call's), as the
	 * decision script answered; -1 when the call reserved in no token limit.
	 */
	public long remainingTokens() {
		long remaining = -1;
		for (int i : this.policy.tokenLimits) {
			long left = remainingAfter(i);
			if (left >= 0) {
				remaining = (remaining < 0) ? left : Math.min(remaining, left);
			}
		}
		return remaining;
	}

	/** The tokens an LLM call reserved in its token limits: its estimate, capped by its policy; 0 when none. */
	public long tokens() {
		int[] tokenLimits = this.policy.tokenLimits;
		return (tokenLimits.length == 0) ? 0 : costs()[tokenLimits[0]];
	}

	/** What the LLM call's model costs, for settling its money limits; null when it counts no money. */
	public LlmPrices.@Nullable Price price() {
		return this.price;
	}

	/** The micro-dollars an LLM call reserved in its money limits: its estimate's price, capped; 0 when none. */
	public long microDollars() {
		int[] moneyLimits = this.policy.moneyLimits;
		return (moneyLimits.length == 0) ? 0 : costs()[moneyLimits[0]];
	}

	/** When the decision script reserved it, in ms since the epoch on Redis's clock: which window it is in. */
	public long reservedAt() {
		return this.reservedAt;
	}

	/**
	 * Each limit's reset when it reserved, in ms after {@link #reservedAt()}, in the keys' order: where the
	 * reservation landed (the end of the window it was counted in; when the bucket would be full after it).
	 */
	public List<Long> resets() {
		Long[] resets = new Long[this.decisions.size()];
		for (int i = 0; i < resets.length; i++) {
			resets[i] = this.decisions.get(i).resetMillis();
		}
		return List.of(resets);
	}

	/** What tells this reservation apart from the client's others: its field in the settle markers. */
	public String id() {
		return idText(this.id);
	}

	/** A new id, made before the decision when a concurrency limit must record the request by it. */
	static long newId() {
		return ThreadLocalRandom.current().nextLong();
	}

	static String idText(long id) {
		return Long.toHexString(id);
	}

	/**
	 * The hash the settle script adds this reservation's {@link #id()} to when it settles it, under the client's
	 * hash tag: one per client and minute of the settle.
	 * @param now when it is settled, in ms since the epoch by the gateway's clock
	 */
	public String markers(long now) {
		return RedisKeys.settledMarkers(this.keys.get(0), now / 60_000);
	}

	CompiledPolicy policy() {
		return this.policy;
	}

	/** Claims the one settle this reservation gets: false when it was claimed before. */
	boolean claim() {
		return SETTLED.compareAndSet(this, 0, 1);
	}

	@Override
	public String toString() {
		return "Reservation " + id() + " of " + this.cost + " on " + this.routeId + " at " + this.reservedAt + " "
				+ this.keys;
	}

}
