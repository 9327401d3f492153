package io.windowlimiter.core.plan;

import java.util.List;
import java.util.Set;

import io.windowlimiter.core.policy.RouteLimit;
import org.jspecify.annotations.Nullable;

/**
 * What an operator gave one client on one route or scope: a plan, or limits of its own (an override).
 *
 * @param plan the plan's name; null for an override
 * @param limits the override's limits; empty for a plan
 * @param expiresAtMillis when it ends, in ms since the epoch on the Redis server's clock; 0 for never
 * @param unnamed whether the override is one limit given no name: it then takes the name of the limit it
 * replaces, so {@code RateLimit-Policy} keeps naming the route's limit
 * @param keepsAlgorithm the positions of the override's limits that name no algorithm: each counts by the
 * algorithm of the limit it replaces, in its keys, so the client's count goes on (empty for a plan)
 */
public record Assignment(@Nullable String plan, List<RouteLimit> limits, long expiresAtMillis, boolean unnamed,
		Set<Integer> keepsAlgorithm) {

	/** A plan, or an override whose limits are named as given, each of the algorithm it names. */
	public Assignment(@Nullable String plan, List<RouteLimit> limits, long expiresAtMillis) {
		this(plan, limits, expiresAtMillis, false, Set.of());
	}

	public Assignment {
		if ((plan == null) == limits.isEmpty()) {
			throw new IllegalArgumentException("an assignment is either a plan or an override's limits");
		}
		limits = List.copyOf(limits);
		keepsAlgorithm = Set.copyOf(keepsAlgorithm);
	}

	/** Whether it still holds at {@code nowMillis}. */
	public boolean isLive(long nowMillis) {
		return this.expiresAtMillis == 0 || nowMillis < this.expiresAtMillis;
	}

}
