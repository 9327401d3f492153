package io.windowlimiter.gateway.algorithm;

import java.util.Arrays;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * The window algorithms a route can choose, by the name used in route configuration.
 */
public enum Algorithm {

	/** A counter per clock-aligned window: cheapest, but up to twice the limit across a window edge. */
	FIXED_WINDOW("fixed-window"),

	/** The times of the last {@code limit} accepted requests in a ring: exact, 8 bytes per unit of limit. */
	SLIDING_LOG("sliding-log", "ring"),

	/** One sorted-set entry per accepted request: exact, readable with ZRANGE, memory grows with traffic. */
	SLIDING_LOG_SORTED_SET("sliding-log", "sorted-set"),

	/** Current and previous window counts, the previous weighted by its overlap: cheap and close to exact. */
	SLIDING_WINDOW_COUNTER("sliding-window-counter"),

	/** GCRA: {@code limit} per window sustained, up to {@code burst} at once; one small key at any limit. */
	TOKEN_BUCKET("token-bucket");

	private final String id;

	private final @Nullable String storage;

	Algorithm(String id) {
		this(id, null);
	}

	Algorithm(String id, @Nullable String storage) {
		this.id = id;
		this.storage = storage;
	}

	/** The name used in route configuration, e.g. {@code sliding-log}. */
	public String id() {
		return this.id;
	}

	/** For the sliding log, how it is stored ({@code log-storage} in route configuration); else null. */
	public @Nullable String storage() {
		return this.storage;
	}

	/** The configuration names of all algorithms, for error messages. */
	public static String ids() {
		return Arrays.stream(values()).map(Algorithm::id).distinct().collect(Collectors.joining(", "));
	}

	/** The storages the sliding log can use, for error messages. */
	public static String storages() {
		return Arrays.stream(values())
			.map(Algorithm::storage)
			.filter(storage -> storage != null)
			.collect(Collectors.joining(", "));
	}

	@Override
	public String toString() {
		return (this.storage != null) ? this.id + " (" + this.storage + ")" : this.id;
	}

}
