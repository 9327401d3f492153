package io.windowlimiter.accuracy;

import java.util.List;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * What this module says about each of the library's algorithms. The switches name every
 * algorithm, so a new one does not compile here until the run measures it.
 */
public final class Algorithms {

	private Algorithms() {
	}

	/** Whether this algorithm is an exact sliding log, which must decide as {@link ExactLog} does. */
	public static boolean exact(Algorithm algorithm) {
		return algorithm == Algorithm.SLIDING_LOG || algorithm == Algorithm.SLIDING_LOG_SORTED_SET;
	}

	/**
	 * The algorithms drawn in the pictures: the sorted-set log decides exactly as the ring does (the
	 * run checks both against the exact log), so one line stands for both.
	 */
	public static List<Algorithm> drawn() {
		return List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG, Algorithm.SLIDING_WINDOW_COUNTER,
				Algorithm.TOKEN_BUCKET);
	}

	/** The name in reports: the route configuration's, with the storage or burst where it matters. */
	public static String name(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED_WINDOW -> "fixed-window";
			case SLIDING_LOG -> "sliding-log (ring)";
			case SLIDING_LOG_SORTED_SET -> "sliding-log (sorted-set)";
			case SLIDING_WINDOW_COUNTER -> "sliding-window-counter";
			case TOKEN_BUCKET -> "token-bucket (burst = limit)";
			case CONCURRENCY -> "concurrency";
		};
	}

	/** The name in pictures. */
	public static String label(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED_WINDOW -> "fixed window";
			case SLIDING_LOG, SLIDING_LOG_SORTED_SET -> "sliding log (exact)";
			case SLIDING_WINDOW_COUNTER -> "sliding window counter";
			case TOKEN_BUCKET -> "token bucket (burst = limit)";
			case CONCURRENCY -> "concurrency (requests in flight, not a rate)";
		};
	}

	/** Colour-blind-safe colours (ColorBrewer Dark2), one per algorithm. */
	public static String colour(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED_WINDOW -> "#d95f02";
			case SLIDING_LOG, SLIDING_LOG_SORTED_SET -> "#1b9e77";
			case SLIDING_WINDOW_COUNTER -> "#7570b3";
			case TOKEN_BUCKET -> "#e7298a";
			case CONCURRENCY -> "#666666";
		};
	}

}
