package io.windowlimiter.gateway;

import io.windowlimiter.gateway.algorithm.WindowPolicy;
import io.windowlimiter.gateway.failure.FailMode;

/**
 * Everything one route's limiter arguments say, validated.
 *
 * @param window the limit and how it is counted
 * @param failMode what to do when Redis cannot decide
 * @param instances how many gateway instances share the limit, for fail-mode {@code local}
 */
public record RoutePolicy(WindowPolicy window, FailMode failMode, int instances) {

	/** The most instances a route may declare. */
	public static final int MAX_INSTANCES = 10_000;

	public RoutePolicy {
		if (instances < 1 || instances > MAX_INSTANCES) {
			throw new IllegalArgumentException("instances must be from 1 to " + MAX_INSTANCES + ", was " + instances);
		}
	}

	/** This instance's share of the limit while Redis is away: limit / instances, at least 1. */
	public WindowPolicy localShare() {
		long share = Math.max(1, this.window.limit() / this.instances);
		return new WindowPolicy(this.window.algorithm(), share, this.window.window());
	}

}
