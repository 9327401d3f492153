package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * Part 6: the ceiling of one hot client. All of a client's keys share its hash tag, so all its
 * decisions run on one Redis master, one core: however many shards a cluster has, one client gets no
 * more than one shard's rate. Measured as part 1 is ({@link DecisionThroughputBenchmark}, the library
 * and redis-benchmark -P 16 on the same script), with every decision on one client key, against the
 * same over 10,000 keys, per algorithm. The limit is huge, so the one client stays within it: its
 * figures are those of allowed decisions, not of the deny cache. Redis is flushed before each run, so
 * one key's log grows through a run as a hot client's does in its first seconds.
 */
final class HotClientBenchmark {

	/** One row: the same algorithm over 10,000 keys and over one. */
	record Result(Algorithm algorithm, DecisionThroughputBenchmark.Result manyKeys,
			DecisionThroughputBenchmark.Result oneKey) {
	}

	/**
	 * The log's maximum, the same for every algorithm: one key stays within it for a run of a few
	 * seconds up to about 300,000 decisions/s (a run that does not is stopped: see checkAllowed). Not
	 * per second: the token bucket takes at most 100 per millisecond of window.
	 */
	static final long LIMIT = Algorithms.MAX_LOG_LIMIT;

	static final String WINDOW = "1m";

	private final LocalRedis redis;

	private final DecisionThroughputBenchmark manyKeys;

	private final DecisionThroughputBenchmark oneKey;

	HotClientBenchmark(LocalRedis redis) {
		this.redis = redis;
		this.manyKeys = new DecisionThroughputBenchmark(redis, Settings.integer("keys", 10_000), LIMIT, WINDOW, false);
		this.oneKey = new DecisionThroughputBenchmark(redis, 1, LIMIT, WINDOW, false);
	}

	String setup() {
		return this.manyKeys.setup() + "; then all of it again on one client key (`-r 1`)";
	}

	List<Result> run() throws IOException, InterruptedException {
		List<Result> results = new ArrayList<>();
		try (Library library = new Library(LocalRedis.HOST, this.redis.port());
				Library probe = new Library(LocalRedis.HOST, this.redis.port(), true)) {
			RedisBenchmarkTool redisBenchmark = new RedisBenchmarkTool(this.redis.port());
			this.manyKeys.jitWarmUp(library);
			for (Algorithm algorithm : Algorithm.rates()) {
				Result result = new Result(algorithm, this.manyKeys.measure(library, probe, redisBenchmark, algorithm),
						this.oneKey.measure(library, probe, redisBenchmark, algorithm));
				System.out.printf("hot %-24s library %,10.0f/s one key %,10.0f/s  redis-benchmark -P16 %,10.0f/s "
						+ "one key %,10.0f/s  (not decided %,d)%n", Algorithms.name(algorithm),
						result.manyKeys().libraryPerSecond(), result.oneKey().libraryPerSecond(),
						result.manyKeys().redisPipelined(), result.oneKey().redisPipelined(),
						result.manyKeys().undecided() + result.oneKey().undecided());
				results.add(result);
			}
		}
		return results;
	}

}
