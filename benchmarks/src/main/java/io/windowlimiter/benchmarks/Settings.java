package io.windowlimiter.benchmarks;

import java.util.Locale;

/**
 * Benchmark settings: a system property {@code bench.<name>}, else the environment variable
 * {@code BENCH_<NAME>} (dots and dashes as underscores), else the default. The defaults keep a full
 * run under ten minutes on two cores.
 */
final class Settings {

	private Settings() {
	}

	/**
	 * The limit per minute of the "all allowed" cases: far above what one of 10,000 clients sends in a
	 * minute here, and no higher, because the ring log allocates 8 bytes per unit of limit.
	 */
	static long allowedLimit() {
		return integer("limit", 1_000);
	}

	/** The limiter's Redis timeout, when a run sets one; empty for the default users get. */
	static String redisTimeout() {
		return string("redis-timeout", "");
	}

	static String string(String name, String fallback) {
		String value = System.getProperty("bench." + name);
		if (value == null || value.isBlank()) {
			value = System.getenv("BENCH_" + name.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_'));
		}
		return (value == null || value.isBlank()) ? fallback : value.trim();
	}

	static int integer(String name, int fallback) {
		return Integer.parseInt(string(name, Integer.toString(fallback)));
	}

}
