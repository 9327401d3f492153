package io.windowlimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisNode;
import reactor.core.publisher.Flux;

/**
 * Part 3: Redis memory per client. Clients that use all of a limit of N requests per minute, one
 * request every minute / N, are replayed with explicit times ({@code LimitScript.decideOne}) for the last 90
 * seconds, which leaves each key in the state such a client keeps it in: fixed window and counter
 * with a full previous and a half current window, the log with one minute of entries. (The counter
 * denies a few of these requests: with a full previous window it allows a little less than N; a
 * denial writes nothing.) Keys are built by {@link RedisKeys} with route
 * {@code orders} and a 12-digit client key, about the length of an IPv4 address.
 *
 * <p>Per client = growth of {@code used_memory}, less connection buffers, from N to 2N clients,
 * divided by N. Measuring a second batch, rather than from an empty server, leaves out what does not
 * grow with clients (script cache, tables of other things). Background expiry is off meanwhile: a
 * replayed key's TTL runs in real time and may end before it is measured (the token bucket's lives one
 * request interval).
 * N defaults to 1,220: 2,440 keys fill Redis's 4,096-bucket key
 * table as much as 5 million keys fill the 2^23-bucket table they need (60%), so each client's share
 * of the key and expiry tables (about 27 bytes) is the one it would have at 5 million clients.
 */
final class MemoryBenchmark {

	static final long EXTRAPOLATE_TO = 5_000_000L;

	static final String ROUTE = "orders";

	/** One row of the results. */
	record Result(Algorithm algorithm, int perMinute, int clients, double bytesPerClient, long memoryUsageOfOneKey,
			double deniedShare) {

		double extrapolatedBytes() {
			return this.bytesPerClient * EXTRAPOLATE_TO;
		}

	}

	private final LocalRedis redis;

	private final int clients = Settings.integer("memory.clients", 1220);

	private final int heavyClients = Settings.integer("memory.heavy-clients", 4);

	private final int inFlight = Settings.integer("memory.in-flight", 256);

	MemoryBenchmark(LocalRedis redis) {
		this.redis = redis;
	}

	List<Result> run() {
		return measure(Algorithm.rates(), true);
	}

	/** The fixed window at 100 a minute alone: the bytes per client part 2 reports (issue 47). */
	List<Result> fixedWindow() {
		return measure(List.of(Algorithm.FIXED_WINDOW), false);
	}

	private List<Result> measure(List<Algorithm> algorithms, boolean heavyLogs) {
		List<Result> results = new ArrayList<>();
		if (!this.redis.activeExpire(false)) {
			System.out.println("memory   DEBUG SET-ACTIVE-EXPIRE refused: keys with short TTLs may expire while measuring");
		}
		try (Library library = new Library(LocalRedis.HOST, this.redis.port())) {
			LimitScript script = library.bean(LimitScript.class);
			for (Algorithm algorithm : algorithms) {
				results.add(measure(script, algorithm, 100, this.clients));
			}
			for (Algorithm algorithm : algorithms) {
				// The log's memory grows with the limit; the counters' does not
				if (heavyLogs && algorithm.id().equals(Algorithm.SLIDING_LOG.id())) {
					results.add(measure(script, algorithm, 10_000, this.heavyClients));
				}
			}
		}
		finally {
			this.redis.activeExpire(true);
		}
		this.redis.flushAll();
		return results;
	}

	private Result measure(LimitScript script, Algorithm algorithm, int perMinute, int clients) {
		long start = System.nanoTime();
		this.redis.flushAll();
		WindowPolicy policy = new WindowPolicy(algorithm, perMinute, Duration.ofMinutes(1));
		long windowStart = System.currentTimeMillis() / 60_000 * 60_000;
		AtomicLong denied = new AtomicLong();
		fill(script, policy, perMinute, 0, clients, windowStart, denied);
		long firstKeys = this.redis.admin().dbsize();
		long first = settledUsedMemory();
		fill(script, policy, perMinute, clients, clients, windowStart, denied);
		long secondKeys = this.redis.admin().dbsize();
		long second = settledUsedMemory();
		if (secondKeys != 2 * firstKeys) {
			throw new IllegalStateException("Keys expired while measuring " + algorithm + ": " + firstKeys
					+ " then " + secondKeys);
		}
		// After measuring: reading a key whose TTL has passed deletes it
		Long sample = this.redis.admin().memoryUsage(key(algorithm, 2 * clients - 1));
		long decisions = 2L * clients * perMinute * 3 / 2;
		Result result = new Result(algorithm, perMinute, clients, (second - first) / (double) clients,
				(sample != null) ? sample : -1, denied.get() / (double) decisions);
		System.out.printf("memory   %-24s %,6d/min  %,12.0f bytes per client  (MEMORY USAGE of one key %,d; "
				+ "%.1f%% denied; %.0f s)%n", Algorithms.name(result.algorithm()), perMinute, result.bytesPerClient(),
				result.memoryUsageOfOneKey(), 100 * result.deniedShare(), (System.nanoTime() - start) / 1e9);
		return result;
	}

	/**
	 * Replays clients [from, from + count) sending {@code perMinute} requests a minute for 90 seconds,
	 * ending 30 seconds into a window (so fixed-window keys live on for 30 s while we measure). Time
	 * steps go one after another over all clients, and no more requests are in flight than there are
	 * clients, so each client's requests reach Redis in time order.
	 */
	private void fill(LimitScript script, WindowPolicy policy, int perMinute, int from, int count,
			long windowStart, AtomicLong denied) {
		long spacing = 60_000L / perMinute;
		int steps = perMinute * 3 / 2;
		long first = windowStart + 30_000 - (steps - 1) * spacing;
		Flux.range(0, steps * count)
			.flatMap(i -> script.decideOne(key(policy.algorithm(), from + i % count), policy, 1,
					Long.toString(first + (i / count) * spacing)), Math.min(this.inFlight, count))
			.doOnNext(decision -> {
				if (!decision.allowed()) {
					denied.incrementAndGet();
				}
			})
			.blockLast();
	}

	private long settledUsedMemory() {
		// Let Redis finish rehashing a key table that just grew (both tables exist until then)
		RedisNode.pause(Duration.ofSeconds(1));
		// Without the connections' buffers: Redis shrinks a query buffer on its own schedule, so they can
		// differ by tens of kilobytes between the two readings (the fixed window read 139 or 156 bytes)
		return this.redis.usedMemory() - this.redis.clientBuffersMemory();
	}

	private static String key(Algorithm algorithm, int client) {
		return RedisKeys.of(ROUTE, DecisionThroughputBenchmark.clientKey(client), algorithm.keySuffix());
	}

}
