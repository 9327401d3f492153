package io.windowlimiter.core.algorithm;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * The window algorithms a route can choose, by the name used in route configuration. Each is one Lua
 * module beside {@link LimitScript}, which checks one limit without writing and hands back how to record
 * the request; the script runs the modules of a route's limits atomically, on Redis's clock so that
 * gateway instances whose clocks differ decide alike.
 */
public enum Algorithm {

	/**
	 * A counter per clock-aligned window: cheapest, but up to twice the limit across a window edge. Its keys
	 * end in "fl", not "f" (nor "fw"): earlier versions stored the window's end, not its length, in an integer
	 * of the same digits, and each would misread the other's values while instances of both share a Redis.
	 */
	FIXED_WINDOW("fixed-window", null, "fixed_window.lua", "fl"),

	/**
	 * The accepted requests in the window in a ring, one entry each with its time and its cost: exact, 8 bytes
	 * per request whatever it costs. Its keys end in "wlog": the previous layout ("ring", one time per unit of
	 * cost) is read once into a key of this one (see {@link #formerKeySuffix()}), never written, so instances
	 * of the previous version sharing the Redis during a rolling upgrade keep counting in theirs; "log" was an
	 * earlier one still.
	 */
	SLIDING_LOG("sliding-log", "ring", "sliding_log.lua", "wlog"),

	/** One sorted-set entry per accepted unit of cost: exact, readable with ZRANGE, memory grows with traffic. */
	SLIDING_LOG_SORTED_SET("sliding-log", "sorted-set", "sliding_log_sorted_set.lua", "zlog"),

	/**
	 * Current and previous window counts, the previous weighted by its overlap: cheap and close to exact. Its
	 * keys end in "c", not "swc", for the fixed window's reason: an earlier version would read this one's
	 * integer values as no counts.
	 */
	SLIDING_WINDOW_COUNTER("sliding-window-counter", null, "sliding_window_counter.lua", "c"),

	/**
	 * GCRA: {@code limit} per window sustained, up to {@code burst} at once; one small key holding the
	 * theoretical arrival time at any limit. Its extra argument is the burst.
	 */
	TOKEN_BUCKET("token-bucket", null, "token_bucket.lua", "tb"),

	/**
	 * At most {@code limit} requests of a client in flight at once: a sorted set of the ids of its requests in
	 * flight, each released when its response ends or, when no release comes (the instance holding it died),
	 * expiring after {@code window}. A request takes one slot whatever its cost. Its extra argument is the
	 * request's id, which the core sets per request ({@link LimitScript.Arguments#withRequestId}).
	 */
	CONCURRENCY("concurrency", null, "concurrency.lua", "cc");

	private final String id;

	private final @Nullable String storage;

	private final String moduleFile;

	private final String keySuffix;

	Algorithm(String id, @Nullable String storage, String moduleFile, String keySuffix) {
		this.id = id;
		this.storage = storage;
		this.moduleFile = moduleFile;
		this.keySuffix = keySuffix;
	}

	/** The name used in route configuration, e.g. {@code sliding-log}. */
	public String id() {
		return this.id;
	}

	/** For the sliding log, how it is stored ({@code log-storage} in route configuration); else null. */
	public @Nullable String storage() {
		return this.storage;
	}

	/** The Lua module, beside {@link LimitScript}, that defines {@code algorithms['<name()>']}. */
	public String moduleFile() {
		return this.moduleFile;
	}

	/** The last part of this algorithm's Redis keys, so that two algorithms never read each other's data. */
	public String keySuffix() {
		return this.keySuffix;
	}

	/**
	 * The key suffix of this algorithm's previous layout, whose keys its script reads when its own do not exist
	 * yet (the sliding log's: "ring"), or null. A reset deletes those keys too, or the script would read the
	 * counts back.
	 */
	public @Nullable String formerKeySuffix() {
		return (this == SLIDING_LOG) ? "ring" : null;
	}

	/**
	 * The module's extra argument for this policy: the token bucket's burst, "" for the others (a concurrency
	 * limit's is the request's id, set per request).
	 */
	public String extra(WindowPolicy policy) {
		return (this == TOKEN_BUCKET) ? Long.toString(policy.burst()) : "";
	}

	/** Whether a request takes one unit of this limit whatever its cost (a slot in flight). */
	public boolean countsRequests() {
		return this == CONCURRENCY;
	}

	/**
	 * The algorithms that count requests per window: every one but {@link #CONCURRENCY}, which counts requests
	 * in flight. What accuracy runs and rate benchmarks compare.
	 */
	public static List<Algorithm> rates() {
		return Arrays.stream(values()).filter(algorithm -> !algorithm.countsRequests()).toList();
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
