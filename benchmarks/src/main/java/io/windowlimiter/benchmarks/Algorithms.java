package io.windowlimiter.benchmarks;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * How the benchmarks name each {@link Algorithm} and configure a route for it: by the route arguments
 * a user writes, so every algorithm, and every storage of one, is measured as users would run it.
 */
final class Algorithms {

	/** The highest limit the sliding log accepts (the library's RouteArgs.MAX_LOG_LIMIT, not public). */
	static final long MAX_LOG_LIMIT = 1_000_000;

	private Algorithms() {
	}

	/** A name unique per algorithm and storage, e.g. {@code sliding-log-sorted-set}. */
	static String name(Algorithm algorithm) {
		return algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/** The {@code RequestRateLimiter} arguments of a route that uses {@code algorithm}. */
	static Map<String, Object> routeArgs(Algorithm algorithm, long limit, String window) {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.algorithm", algorithm.id());
		if (algorithm.storage() != null) {
			args.put("window-rate-limiter.log-storage", algorithm.storage());
		}
		args.put("window-rate-limiter.limit", Long.toString(limit));
		args.put("window-rate-limiter.window", window);
		return args;
	}

}
