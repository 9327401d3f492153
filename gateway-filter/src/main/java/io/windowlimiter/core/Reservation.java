package io.windowlimiter.core;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.core.policy.CompiledPolicy;

/**
 * What one admitted request holds in Redis until it is settled: its cost, counted in every limit of its
 * policy by the decision script at {@link #reservedAt()}. An adapter whose cost depends on the response hands
 * it to {@link RateLimiterCore#settle} with the actual cost; one that never does leaves the request charged
 * what was reserved (a client that disconnects before its response is charged so).
 *
 * <p>Settled at most once: a second {@code settle} of this object sends nothing, and the settle script
 * marks the reservation in Redis (see {@link #marker()}), so a command Redis runs twice changes nothing
 * either.
 */
public final class Reservation {

	private final String routeId;

	private final CompiledPolicy policy;

	private final List<String> keys;

	private final long cost;

	private final long reservedAt;

	private final String id;

	private final long[] costs;

	private final long[] remaining;

	private final AtomicBoolean settled = new AtomicBoolean();

	Reservation(String routeId, CompiledPolicy policy, List<String> keys, long cost, long reservedAt) {
		this(routeId, policy, keys, filled(keys.size(), cost), cost, reservedAt, new long[0]);
	}

	/** A reservation of a cost per limit, with what each limit had left after it. */
	Reservation(String routeId, CompiledPolicy policy, List<String> keys, long[] costs, Verdict verdict) {
		this(routeId, policy, keys, costs, Arrays.stream(costs).max().orElse(0), verdict.now(),
				verdict.decisions().stream().mapToLong(Decision::remaining).toArray());
	}

	private Reservation(String routeId, CompiledPolicy policy, List<String> keys, long[] costs, long cost,
			long reservedAt, long[] remaining) {
		this.costs = costs;
		this.remaining = remaining;
		this.routeId = routeId;
		this.policy = policy;
		this.keys = keys;
		this.cost = cost;
		this.reservedAt = reservedAt;
		// unique among the client's reservations while markers live (a window): 64 random bits
		this.id = Long.toHexString(ThreadLocalRandom.current().nextLong());
	}

	/** The route (or filter id) the request was admitted on. */
	public String routeId() {
		return this.routeId;
	}

	/** The client's keys, one per limit, in the policy's order. */
	public List<String> keys() {
		return this.keys;
	}

	/** The limits the cost was reserved in, as they were then, in the keys' order. */
	public List<WindowPolicy> policies() {
		return this.policy.policies;
	}

	/** The cost reserved in each limit, in the keys' order (a copy). */
	public long[] costs() {
		return this.costs.clone();
	}

	/**
	 * What limit i had left right after this reservation, as the decision script answered; -1 when not known
	 * (a reservation of one cost for every limit does not keep it).
	 */
	public long remainingAfter(int limit) {
		return (limit < this.remaining.length) ? this.remaining[limit] : -1;
	}

	private static long[] filled(int size, long cost) {
		long[] costs = new long[size];
		Arrays.fill(costs, cost);
		return costs;
	}

	/** The cost reserved in every limit (the largest, when limits were reserved different costs). */
	public long cost() {
		return this.cost;
	}

	/** When the decision script reserved it, in ms since the epoch on Redis's clock: which window it is in. */
	public long reservedAt() {
		return this.reservedAt;
	}

	/** What tells this reservation apart from the client's others: part of its marker. */
	public String id() {
		return this.id;
	}

	/** The key the settle script sets once this reservation is settled, under the client's hash tag. */
	public String marker() {
		return RedisKeys.settledMarker(this.keys.get(0), this.id);
	}

	CompiledPolicy policy() {
		return this.policy;
	}

	/** Claims the one settle this reservation gets: false when it was claimed before. */
	boolean claim() {
		return this.settled.compareAndSet(false, true);
	}

	@Override
	public String toString() {
		return "Reservation " + this.id + " of " + this.cost + " on " + this.routeId + " at " + this.reservedAt + " "
				+ this.keys;
	}

}
