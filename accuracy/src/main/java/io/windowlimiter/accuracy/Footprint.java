package io.windowlimiter.accuracy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.gateway.test.RedisTestServer;

/**
 * Redis memory per client and decisions per second, every algorithm measured side by side in one run
 * on the same Redis. Speed rounds alternate between the algorithms, so that drift in the machine's load
 * hits all of them alike.
 */
public final class Footprint {

	private final RedisTestServer redis;

	private final ScriptReplay replay;

	public Footprint(RedisTestServer redis, ScriptReplay replay) {
		this.redis = redis;
		this.replay = replay;
	}

	/**
	 * What one algorithm costs.
	 *
	 * @param algorithm the algorithm
	 * @param bytesPerClient growth of Redis's {@code used_memory} (less connection buffers) over
	 * {@link #memoryTrace}, divided by the clients
	 * @param decisionsPerSecond the fastest round of {@link #speedTrace}: on a shared machine the slower
	 * rounds measure the neighbours' load rather than the algorithm
	 * @param roundsPerSecond every round's decisions per second
	 */
	public record Cost(Algorithm algorithm, double bytesPerClient, double decisionsPerSecond,
			double[] roundsPerSecond) {
	}

	/** Every client sends 100 requests per minute, evenly spaced, for a minute and a half: all allowed. */
	public static Trace speedTrace(int clients) {
		List<ClientTrace> traces = new ArrayList<>();
		long spacing = Traces.WINDOW.toMillis() / Traces.LIMIT;
		for (int c = 0; c < clients; c++) {
			long[] times = new long[150];
			for (int i = 0; i < times.length; i++) {
				// Clients start at different moments of the first spacing, as real ones would.
				times[i] = Traces.T0 + (c % spacing) + i * spacing;
			}
			traces.add(new ClientTrace(String.format(Locale.ROOT, "client-%05d", c), times));
		}
		return new Trace("speed", clients + " clients, 100 requests per minute each, evenly spaced, for 1.5 minutes",
				1.0, Traces.LIMIT, Traces.WINDOW, traces);
	}

	/**
	 * Every client sends its 100 requests per minute early in each of two minutes, 1 ms apart. At the
	 * end each has used its limit within the last minute, the most state any algorithm keeps at this
	 * limit, and every key still has most of a minute to live. (A client sending evenly keeps its token
	 * bucket nearly full, and that key then lives only an interval, too short to be measured.)
	 */
	public static Trace memoryTrace(int clients) {
		List<ClientTrace> traces = new ArrayList<>();
		for (int c = 0; c < clients; c++) {
			long[] times = new long[200];
			for (int i = 0; i < times.length; i++) {
				times[i] = Traces.T0 + 1_000 + (c % 600) + (i / 100) * Traces.WINDOW.toMillis() + (i % 100);
			}
			traces.add(new ClientTrace(String.format(Locale.ROOT, "client-%05d", c), times));
		}
		return new Trace("memory", clients + " clients, 100 requests 1 ms apart early in each of two minutes", 1.0,
				Traces.LIMIT, Traces.WINDOW, traces);
	}

	public List<Cost> measure(List<Algorithm> algorithms, Trace speedTrace, int rounds, Trace memoryTrace) {
		// One untimed pass each first: the JIT and Redis's script cache warm up outside the figures.
		for (Algorithm algorithm : algorithms) {
			this.replay.replay(speedTrace, algorithm);
		}
		Map<Algorithm, double[]> speeds = new EnumMap<>(Algorithm.class);
		for (int round = 0; round < rounds; round++) {
			for (Algorithm algorithm : algorithms) {
				this.redis.flushAll();
				long start = System.nanoTime();
				this.replay.replay(speedTrace, algorithm);
				double seconds = (System.nanoTime() - start) / 1e9;
				speeds.computeIfAbsent(algorithm, a -> new double[rounds])[round] = speedTrace.requests() / seconds;
			}
		}
		// Memory twice over: Redis allocates some of its own structures once, on first growth, and that
		// must not be charged to whichever algorithm happens to go first. The second pass counts.
		Map<Algorithm, Double> bytes = new EnumMap<>(Algorithm.class);
		for (int pass = 0; pass < 2; pass++) {
			for (Algorithm algorithm : algorithms) {
				this.redis.flushAll();
				long before = usedMemory();
				this.replay.replay(memoryTrace, algorithm);
				long after = usedMemory();
				bytes.put(algorithm, (double) (after - before) / memoryTrace.clients().size());
			}
		}
		List<Cost> costs = new ArrayList<>();
		for (Algorithm algorithm : algorithms) {
			double[] rates = speeds.get(algorithm);
			costs.add(new Cost(algorithm, bytes.get(algorithm), Arrays.stream(rates).max().orElseThrow(),
					rates));
		}
		this.redis.flushAll();
		return costs;
	}

	/** Redis's memory, less its buffers for connections: those come and go with traffic, not with keys. */
	private long usedMemory() {
		Properties memory = this.redis.info("memory");
		return Long.parseLong(memory.getProperty("used_memory")) - Long.parseLong(memory.getProperty("mem_clients_normal"));
	}

}
