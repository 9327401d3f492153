package io.windowlimiter.core.autoconfigure;

import java.time.Duration;

/** Allowed requests near a limit (Envoy's near_limit): counted, and optionally logged. */
public class NearLimitProperties {

	/**
	 * The share of a limit from which an allowed request counts in gateway.ratelimit.near_limit: above 0,
	 * at most 1. 0.8 (Envoy's default) counts a request that leaves its client with 20% or less of a
	 * limit (of a token bucket's burst).
	 */
	private double share = io.windowlimiter.core.NearLimit.DEFAULT_SHARE;

	/**
	 * When set, at most one log line per this interval names a route, limit and client near it (a long
	 * client key shortened to a hash). Unset (the default), nothing is logged.
	 */
	private Duration logInterval;

	public double getShare() {
		return this.share;
	}

	public void setShare(double share) {
		this.share = share;
	}

	public Duration getLogInterval() {
		return this.logInterval;
	}

	public void setLogInterval(Duration logInterval) {
		this.logInterval = logInterval;
	}

}
