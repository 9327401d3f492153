package io.windowlimiter.gateway;

import java.util.List;

import io.windowlimiter.gateway.failure.FailMode;

/**
 * Everything one route's limiter arguments say, validated.
 *
 * @param limits one or more limits, all decided together: a request passes only if every one allows it
 * @param cost what one request consumes of every limit
 * @param shadow decide, count and send headers, but never block (for rolling out a new limit)
 * @param failMode what to do when Redis cannot decide
 * @param instances how many gateway instances share the limits, for fail-mode {@code local}
 */
public record RoutePolicy(List<RouteLimit> limits, long cost, boolean shadow, FailMode failMode, int instances) {

	/** The most instances a route may declare. */
	public static final int MAX_INSTANCES = 10_000;

	public RoutePolicy {
		if (limits.isEmpty()) {
			throw new IllegalArgumentException("a route needs at least one limit");
		}
		if (instances < 1 || instances > MAX_INSTANCES) {
			throw new IllegalArgumentException("instances must be from 1 to " + MAX_INSTANCES + ", was " + instances);
		}
		limits = List.copyOf(limits);
	}

	/** The route's first limit, which most routes have alone. */
	public RouteLimit first() {
		return this.limits.get(0);
	}

}
