package io.windowlimiter.core.algorithm;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * A validated limit: at most {@code limit} requests per {@code window}, decided by {@code algorithm}.
 *
 * @param algorithm how the window is counted
 * @param limit requests per window, at least 1
 * @param window the window, a whole number of milliseconds, at least 1 ms
 * @param burst for the token bucket, requests allowed at once from a full bucket; else equal to limit
 * @param calendar for a calendar quota (a fixed window only), the local day, week or month it counts in;
 * the window is then the period's nominal length; null for a window measured from the epoch
 */
public record WindowPolicy(Algorithm algorithm, long limit, Duration window, long burst,
		@Nullable CalendarPeriod calendar) {

	/** The most requests one window may allow. */
	public static final long MAX_LIMIT = 1_000_000_000L;

	/**
	 * The highest limit of a fixed window (and calendar quota), which only adds and compares its count: a
	 * budget in micro-dollars ({@code unit: usd}) of up to $1,000,000,000. Twice it (a count at the limit and a
	 * cost as large) is still far below 2^53, the largest whole number a Lua double holds exactly.
	 */
	public static final long MAX_FIXED_WINDOW_LIMIT = 1_000_000_000_000_000L;

	/**
	 * The highest limit of a sliding log: the ring's entries count units in 22 bits (modulo 2^22), which tells
	 * apart the units of a window while it holds fewer than 2^21, twice this and more (see sliding_log.lua).
	 */
	public static final long MAX_LOG_LIMIT = 1_000_000;

	/** The longest window: a year covers every quota period users ask for. */
	public static final Duration MAX_WINDOW = Duration.ofDays(366);

	/** The sliding window counter compares limit * window in exact whole numbers (Lua doubles). */
	public static final long MAX_LIMIT_TIMES_WINDOW_MILLIS = 1L << 53;

	/**
	 * The token bucket's most requests per millisecond of window: its emission interval, window / limit,
	 * is at least 0.01 ms. The bucket's time is a double of epoch milliseconds, which steps by 2^-12 ms
	 * until 2039 (2^-11 ms until 2109): each request moves it by the interval rounded to that step, so the
	 * rate is off by at most 1.2% (2.4%) at 0.01 ms, and much smaller intervals stop moving it at all.
	 */
	public static final long MAX_TOKEN_BUCKET_LIMIT_PER_WINDOW_MILLI = 100;

	public WindowPolicy {
		long max = maxLimit(algorithm);
		if (limit < 1 || limit > max) {
			throw new IllegalArgumentException("limit must be from 1 to " + max + ", was " + limit);
		}
		if (!isValidWindow(window)) {
			throw new IllegalArgumentException("window must be whole milliseconds from 1ms to 366d, was " + window);
		}
		if (algorithm != Algorithm.FIXED_WINDOW && !fitsExactArithmetic(limit, window)) {
			throw new IllegalArgumentException("limit * window (in ms) must stay below 2^53");
		}
		if (limit > MAX_LOG_LIMIT && (algorithm == Algorithm.SLIDING_LOG || algorithm == Algorithm.SLIDING_LOG_SORTED_SET)) {
			throw new IllegalArgumentException("a sliding log's limit must be at most " + MAX_LOG_LIMIT + ", was " + limit);
		}
		if (burst < 1 || burst > max) {
			throw new IllegalArgumentException("burst must be from 1 to " + max + ", was " + burst);
		}
		if (algorithm == Algorithm.TOKEN_BUCKET && !fitsTokenBucketClock(limit, window)) {
			throw new IllegalArgumentException("a token bucket's window / limit must be at least 0.01 ms, was "
					+ window.toMillis() + " ms / " + limit);
		}
		if (calendar != null && (algorithm != Algorithm.FIXED_WINDOW || !window.equals(calendar.unit().nominal()))) {
			throw new IllegalArgumentException("a calendar quota is a fixed window of its period's nominal length");
		}
	}

	/** A window measured from the epoch (not a calendar quota). */
	public WindowPolicy(Algorithm algorithm, long limit, Duration window, long burst) {
		this(algorithm, limit, window, burst, null);
	}

	/** A calendar quota: {@code limit} per local day, week or month. */
	public static WindowPolicy calendar(long limit, CalendarPeriod period) {
		return new WindowPolicy(Algorithm.FIXED_WINDOW, limit, period.unit().nominal(), limit, period);
	}

	/** A policy whose burst is its limit (the only choice for the window algorithms). */
	public WindowPolicy(Algorithm algorithm, long limit, Duration window) {
		this(algorithm, limit, window, limit);
	}

	/** Whether {@code window} is whole milliseconds from 1 ms to {@link #MAX_WINDOW}. */
	public static boolean isValidWindow(Duration window) {
		return window.compareTo(Duration.ofMillis(1)) >= 0 && window.compareTo(MAX_WINDOW) <= 0
				&& window.toNanos() % 1_000_000 == 0;
	}

	/** The highest limit of {@code algorithm}: {@link #MAX_FIXED_WINDOW_LIMIT} for the fixed window, else {@link #MAX_LIMIT}. */
	public static long maxLimit(Algorithm algorithm) {
		return (algorithm == Algorithm.FIXED_WINDOW) ? MAX_FIXED_WINDOW_LIMIT : MAX_LIMIT;
	}

	/**
	 * Whether limit * window in ms stays below 2^53, so the scripts compare them exactly (the sliding window
	 * counter weighs counts by time; the fixed window does not, and is not held to it).
	 */
	public static boolean fitsExactArithmetic(long limit, Duration window) {
		return limit <= MAX_LIMIT_TIMES_WINDOW_MILLIS / window.toMillis();
	}

	/**
	 * Whether the token bucket's emission interval, window / limit, is at least 0.01 ms, so that adding it
	 * to a time in epoch milliseconds (a double) keeps it within about 1%.
	 */
	public static boolean fitsTokenBucketClock(long limit, Duration window) {
		return limit <= MAX_TOKEN_BUCKET_LIMIT_PER_WINDOW_MILLI * window.toMillis();
	}

	public long windowMillis() {
		return this.window.toMillis();
	}

}
