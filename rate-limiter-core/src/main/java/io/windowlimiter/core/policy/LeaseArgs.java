package io.windowlimiter.core.policy;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import io.windowlimiter.core.algorithm.Algorithm;
import org.jspecify.annotations.Nullable;

/**
 * A route's {@code window-rate-limiter.lease}: the longest an instance holds a part of a hot client's quota
 * leased from Redis (see {@code io.windowlimiter.core.Leases} and docs/hot-clients.md). Reading it, and every
 * check of where it may be used: only with limits a lease counts exactly (the fixed window, calendar quotas
 * included, and the token bucket), so also for each plan a route decides by, never with a penalty
 * ({@code block-for}), a max-delay, a shadow route or LLM metering. Messages name the route, the property and
 * what is allowed. A policy an operator's override gives a client with other limits is decided by Redis request
 * by request, as without a lease.
 */
public final class LeaseArgs {

	/** The route property, after {@code window-rate-limiter.}. */
	public static final String PROPERTY = "lease";

	/**
	 * The longest lease: a part held longer is quota other instances cannot have meanwhile, and a hot client's
	 * rate is known for a few milliseconds ahead, not seconds.
	 */
	public static final Duration MAX = Duration.ofSeconds(1);

	/** The algorithms a leased part is exact for: both count a unit once, where and when it was reserved. */
	public static final Set<Algorithm> LEASABLE = EnumSet.of(Algorithm.FIXED_WINDOW, Algorithm.TOKEN_BUCKET);

	private static final String ALLOWED = "a duration of whole milliseconds from 1ms to 1s, such as 20ms or 50ms "
			+ "(absent or 0: no leases)";

	private static final String ONLY_EXACT = "fixed-window (calendar quotas included) or token-bucket limits only, which a "
			+ "leased part counts exactly (a sliding log or counter weighs each request by when it came, which a part "
			+ "reserved ahead cannot: see docs/hot-clients.md); remove lease or count every limit with one of those";

	private LeaseArgs() {
	}

	/**
	 * The route's lease, zero when absent.
	 * @throws InvalidRouteConfigurationException naming the route and property, for anything but a duration
	 * from 1 ms to {@link #MAX} with its unit
	 */
	static Duration parse(String routeId, @Nullable String text) {
		if (text == null || text.equals("0")) {
			return Duration.ZERO;
		}
		if (!text.isEmpty() && text.chars().allMatch(Character::isDigit)) {
			throw invalid(routeId, "is '" + text + "', a number without a unit",
					"a duration with its unit: did you mean " + text + "ms? (" + ALLOWED + ")");
		}
		Duration value = MaxDelay.wholeMillisUpTo(text, MAX);
		if (value == null) {
			throw invalid(routeId, "is '" + text + "'", ALLOWED);
		}
		return value;
	}

	/** A lease with what it cannot be exact beside: a shadow route (it refuses nothing) or a max-delay. */
	static void checkRoute(String routeId, Duration lease, boolean shadow, Duration maxDelay) {
		if (lease.isZero()) {
			return;
		}
		if (shadow) {
			throw invalid(routeId, "is '" + MaxDelay.text(lease) + "' on a shadow route",
					"no lease with shadow: true (a shadow route refuses nothing, and its counts are read request by request)");
		}
		if (!maxDelay.isZero()) {
			throw invalid(routeId, "is '" + MaxDelay.text(lease) + "' beside max-delay '" + MaxDelay.text(maxDelay) + "'",
					"either lease or max-delay (a held request's later slot is reserved in Redis request by request)");
		}
	}

	/** A lease on a route metering LLM calls: their costs are known only when each response has ended. */
	static void checkNotMetered(String routeId, Duration lease, boolean metersTokens) {
		if (!lease.isZero() && metersTokens) {
			throw invalid(routeId, "is '" + MaxDelay.text(lease) + "' on a route metering LLM calls",
					"no lease with llm (each call is reserved at its estimate and settled to its usage, one by one)");
		}
	}

	/**
	 * Every limit of a route that leases must be counted exactly by a leased part.
	 * @param where for messages, e.g. {@code  of plan 'free'}; empty for the route's own limits
	 */
	static void checkLimits(String routeId, Duration lease, List<RouteLimit> limits, String where) {
		int index = indexNotLeasable(lease, limits);
		if (index >= 0) {
			RouteLimit limit = limits.get(index);
			String counted = (limit.blockFor().compareTo(Duration.ZERO) > 0) ? "which has a block-for"
					: limit.countsTokens() || limit.countsMoney() ? "which counts " + (limit.countsTokens() ? "tokens" : "money")
							: "counted by " + limit.policy().algorithm();
			throw invalid(routeId, "is '" + MaxDelay.text(lease) + "' with limit '" + limit.name() + "'" + where + " "
					+ counted, ONLY_EXACT);
		}
	}

	/** The position of the first limit a leased part cannot count exactly, on a route that leases; else -1. */
	public static int indexNotLeasable(Duration lease, List<RouteLimit> limits) {
		if (lease.isZero()) {
			return -1;
		}
		for (int i = 0; i < limits.size(); i++) {
			RouteLimit limit = limits.get(i);
			// a penalty's block is set by the refusal of one request, which a part admitted here never meets
			if (!LEASABLE.contains(limit.policy().algorithm()) || limit.blockFor().compareTo(Duration.ZERO) > 0
					|| limit.countsTokens() || limit.countsMoney()) {
				return i;
			}
		}
		return -1;
	}

	private static InvalidRouteConfigurationException invalid(String routeId, String what, String allowed) {
		return new InvalidRouteConfigurationException(routeId, RouteArgs.PREFIX + PROPERTY, what, allowed);
	}

}
