package io.windowlimiter.gateway.algorithm;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The window algorithms a route can choose, by the name used in route configuration.
 */
public enum Algorithm {

	/** A counter per clock-aligned window: cheapest, but up to twice the limit across a window edge. */
	FIXED_WINDOW("fixed-window"),

	/** One entry per accepted request: exact, memory grows with the limit. */
	SLIDING_LOG("sliding-log"),

	/** Current and previous window counts, the previous weighted by its overlap: cheap and close to exact. */
	SLIDING_WINDOW_COUNTER("sliding-window-counter");

	private final String id;

	Algorithm(String id) {
		this.id = id;
	}

	/** The name used in route configuration, e.g. {@code sliding-log}. */
	public String id() {
		return this.id;
	}

	/** The configuration names of all algorithms, for error messages. */
	public static String ids() {
		return Arrays.stream(values()).map(Algorithm::id).collect(Collectors.joining(", "));
	}

	@Override
	public String toString() {
		return this.id;
	}

}
