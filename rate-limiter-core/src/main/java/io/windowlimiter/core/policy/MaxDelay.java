package io.windowlimiter.core.policy;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import io.windowlimiter.core.algorithm.Algorithm;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * A route's {@code window-rate-limiter.max-delay}: how long a request its limits would take later is held
 * and then passed instead of refused. Reading it, and every check of where it may be used: only with
 * limits that reserve a later slot exactly (the token bucket and the fixed window), so also for each plan
 * a route may decide by and each override made at run time, never on a shadow route, and the same on every
 * route naming a scope. Messages name the route (or override), the property and what is allowed.
 */
public final class MaxDelay {

	/** The route property, after {@code window-rate-limiter.}. */
	public static final String PROPERTY = "max-delay";

	/**
	 * The longest hold: a held request keeps its connection open, and past a minute clients and proxies in
	 * front of the gateway commonly time out (then the hold helped nobody and its slot was spent).
	 */
	public static final Duration MAX = Duration.ofMinutes(1);

	/** The algorithms that reserve a later slot exactly: see docs/max-delay.md for why the others cannot. */
	public static final Set<Algorithm> HOLDING = EnumSet.of(Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW);

	private static final String ALLOWED = "a duration of whole milliseconds from 0 (none) to 1m, such as 500ms, 2s or 30s";

	private static final String ONLY_HOLDING = "token-bucket or fixed-window limits only, which reserve a later slot "
			+ "exactly (a sliding log or counter cannot: see docs/max-delay.md); remove max-delay or count every limit "
			+ "with one of those";

	private MaxDelay() {
	}

	/**
	 * The route's max-delay, zero when absent.
	 * @throws InvalidRouteConfigurationException naming the route and property, for anything but a duration
	 * from 0 to {@link #MAX} with its unit
	 */
	static Duration parse(String routeId, @Nullable String text) {
		if (text == null || text.equals("0")) {
			return Duration.ZERO;
		}
		if (!text.isEmpty() && text.chars().allMatch(Character::isDigit)) {
			throw invalid(routeId, "is '" + text + "', a number without a unit, which would mean " + text + " ms",
					"a duration with its unit: did you mean " + text + "s? (or " + text + "ms; " + ALLOWED + ")");
		}
		Duration value = wholeMillisUpTo(text, MAX);
		if (value == null) {
			throw invalid(routeId, "is '" + text + "'", ALLOWED);
		}
		return value;
	}

	/**
	 * A route's duration as written ({@code 500ms}, {@code 2s}, ISO {@code PT1S}): whole milliseconds from 0 to
	 * {@code max}; null for anything else. What {@code max-delay} and {@code lease} are read with.
	 */
	static @Nullable Duration wholeMillisUpTo(String text, Duration max) {
		try {
			Duration value = DurationStyle.detectAndParse(text);
			if (!value.isNegative() && value.compareTo(max) <= 0 && value.toNanos() % 1_000_000 == 0) {
				return value;
			}
		}
		catch (IllegalArgumentException | DateTimeParseException | ArithmeticException ex) {
			// not a duration this reads
		}
		return null;
	}

	/** A max-delay on a shadow route: it never refuses, so it has nothing to hold. */
	static void checkNotShadow(String routeId, Duration maxDelay, boolean shadow) {
		if (shadow && !maxDelay.isZero()) {
			throw invalid(routeId, "is '" + text(maxDelay) + "' on a shadow route",
					"no max-delay with shadow: true (a shadow route never refuses, so it has nothing to hold)");
		}
	}

	/**
	 * Every limit of a route that holds must reserve exactly.
	 * @param where for messages, e.g. {@code  of plan 'free'}; empty for the route's own limits
	 */
	public static void checkLimits(String routeId, Duration maxDelay, List<RouteLimit> limits, String where) {
		int index = indexNotHolding(maxDelay, limits);
		if (index >= 0) {
			RouteLimit limit = limits.get(index);
			String counted = (limit.policy().calendar() != null) ? "which is a calendar quota"
					: (limit.blockFor().compareTo(Duration.ZERO) > 0) ? "which has a block-for"
							: "counted by " + limit.policy().algorithm();
			throw invalid(routeId, "is '" + text(maxDelay) + "' with limit '" + limit.name() + "'" + where + " "
					+ counted, ONLY_HOLDING);
		}
	}

	/**
	 * An override's limits on a route that holds must each reserve exactly, as the route's own must; the
	 * message names the override's {@code limits[i].algorithm}.
	 * @param target the route or scope the override is for
	 * @param routeId a route the override applies on
	 */
	public static void checkOverride(String target, String routeId, RoutePolicy route, List<RouteLimit> limits) {
		int index = indexNotHolding(route.maxDelay(), limits);
		if (index >= 0) {
			throw new InvalidRouteConfigurationException("override for", target, "limits[" + index + "].algorithm",
					"is '" + limits.get(index).policy().algorithm() + "' on route '" + routeId + "', which holds requests up to "
							+ RouteArgs.PREFIX + PROPERTY + " " + text(route.maxDelay()),
					ONLY_HOLDING);
		}
	}

	/** The position of the first limit that cannot reserve a later slot, on a route that holds; else -1. */
	public static int indexNotHolding(Duration maxDelay, List<RouteLimit> limits) {
		if (maxDelay.isZero()) {
			return -1;
		}
		for (int i = 0; i < limits.size(); i++) {
			RouteLimit limit = limits.get(i);
			// a calendar quota's period and a penalty's block are decided by other parts of the script, which
			// reserve no later slot
			if (!HOLDING.contains(limit.policy().algorithm()) || limit.policy().calendar() != null
					|| limit.blockFor().compareTo(Duration.ZERO) > 0) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * Routes naming one scope share its counters, and the slots reserved in them: a route that does not hold
	 * would read a slot reserved ahead as a bucket too far ahead, or a window counted early.
	 */
	static void checkScopes(String routeId, CompiledRoute route, String otherId, CompiledRoute other) {
		Duration mine = route.policy.maxDelay();
		Duration theirs = other.policy.maxDelay();
		if (mine.equals(theirs)) {
			return;
		}
		List<String> shared = new ArrayList<>(route.scopes);
		shared.retainAll(other.scopes);
		if (!shared.isEmpty()) {
			throw invalid(routeId, "is '" + text(mine) + "' but '" + text(theirs) + "' on route '" + otherId
					+ "', which names scope '" + shared.get(0) + "' too",
					"the same max-delay on every route naming a scope: its counters hold the slots each reserves");
		}
	}

	/** A duration as written in configuration: 2s, 500ms, 1m. */
	static String text(Duration duration) {
		long millis = duration.toMillis();
		if (millis % 60_000 == 0 && millis > 0) {
			return millis / 60_000 + "m";
		}
		return (millis % 1_000 == 0) ? millis / 1_000 + "s" : millis + "ms";
	}

	private static InvalidRouteConfigurationException invalid(String routeId, String what, String allowed) {
		return new InvalidRouteConfigurationException(routeId, RouteArgs.PREFIX + PROPERTY, what, allowed);
	}

}
