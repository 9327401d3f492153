package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a sliding log costs in Redis {@code used_memory}, key and expiry included: a client sending
 * a fresh key with every request (one accepted request per key) must cost little at any limit, a client
 * that uses its whole limit about 8 bytes per unit of it in the ring. Measured on a Redis server of
 * this class's own, so that keys of other tests expiring meanwhile do not blur the figures.
 */
class SlidingLogMemoryTests {

	private static final long T0 = ScriptTestSupport.T0;

	private static RedisProcess server;

	private static LettuceConnectionFactory connections;

	private static ReactiveStringRedisTemplate redis;

	private static LimitScript script;

	@BeforeAll
	static void start() {
		server = RedisProcess.launch();
		connections = new LettuceConnectionFactory("127.0.0.1", server.port());
		connections.afterPropertiesSet();
		connections.start();
		redis = new ReactiveStringRedisTemplate(connections);
		script = new LimitScript(redis);
	}

	@AfterAll
	static void stop() {
		connections.destroy();
		server.close();
	}

	private static long usedMemory() {
		return redis.execute(connection -> connection.serverCommands().info("memory"))
			.map(info -> Long.parseLong(info.getProperty("used_memory")))
			.blockLast(Duration.ofSeconds(5));
	}

	/** Bytes of used_memory per client, after {@code clients} clients each made the requests {@code fill} makes. */
	private static double bytesPerClient(Algorithm algorithm, int clients, Function<String, Mono<?>> fill) {
		// load the script and let the first connection's buffers settle before measuring
		fill.apply(RedisKeys.of("warm-up", UUID.randomUUID().toString(), algorithm.keySuffix())).block();
		long before = usedMemory();
		Flux.range(0, clients)
			.flatMap(i -> fill.apply(RedisKeys.of("orders", UUID.randomUUID().toString(), algorithm.keySuffix())), 16)
			.blockLast(Duration.ofMinutes(2));
		double perClient = (usedMemory() - before) / (double) clients;
		redis.execute(connection -> connection.serverCommands().flushAll()).blockLast(Duration.ofSeconds(30));
		System.out.printf("memory %-24s %s%n", algorithm, String.format("%,.0f bytes per client", perClient));
		return perClient;
	}

	private static Mono<?> requests(Algorithm algorithm, String key, long limit, long cost, int times) {
		WindowPolicy policy = new WindowPolicy(algorithm, limit, Duration.ofMinutes(1));
		List<LimitScript.Limit> limits = List.of(new LimitScript.Limit(key, policy));
		return Flux.range(0, times)
			.concatMap(i -> script.decide(limits, cost, Long.toString(T0 + i)))
			.doOnNext(verdict -> assertThat(verdict.allowed()).isTrue())
			.then();
	}

	private static double freshKey(Algorithm algorithm, long limit) {
		System.out.print("fresh key, limit " + limit + ": ");
		return bytesPerClient(algorithm, 1_000, key -> requests(algorithm, key, limit, 1, 1));
	}

	private static double fullClient(Algorithm algorithm, long limit, int clients) {
		System.out.print("full client, limit " + limit + " in 100 requests: ");
		return bytesPerClient(algorithm, clients, key -> requests(algorithm, key, limit, limit / 100, 100));
	}

	@Test
	void aFreshKeyCostsLittleWhateverTheLimit() {
		for (Algorithm log : List.of(Algorithm.SLIDING_LOG, Algorithm.SLIDING_LOG_SORTED_SET)) {
			assertThat(freshKey(log, 10_000)).isLessThanOrEqualTo(400);
			assertThat(freshKey(log, 1_000_000)).isLessThanOrEqualTo(400);
		}
	}

	/**
	 * The ring keeps one entry per request: a client that used its whole limit in requests of cost 1 costs about
	 * 8 bytes a request (as when the ring kept one time per unit of cost), one that used it in 100 requests 100
	 * entries, whatever the limit. (The ring of one time per unit held 8,390,648 bytes for a client that used a
	 * limit of 1,000,000 in 100 requests.)
	 */
	@Test
	void aFullRingCostsAboutEightBytesPerRequestWhateverTheyCost() {
		Algorithm ring = Algorithm.SLIDING_LOG;
		System.out.print("full client, limit 1000 in requests of 1: ");
		assertThat(bytesPerClient(ring, 20, key -> requests(ring, key, 1_000, 1, 1_000))).isLessThanOrEqualTo(8.4 * 1_000);
		assertThat(fullClient(ring, 10_000, 20)).isLessThanOrEqualTo(2_000);
		assertThat(fullClient(ring, 1_000_000, 20)).isLessThanOrEqualTo(2_000);
	}

	/** Microseconds Redis has spent in scripts (EVAL and EVALSHA) since it started: this class's calls only. */
	private static long scriptMicros() {
		Properties stats = redis.execute(connection -> connection.serverCommands().info("commandstats"))
			.blockLast(Duration.ofSeconds(5));
		long micros = 0;
		for (String command : List.of("cmdstat_eval", "cmdstat_evalsha")) {
			Matcher usec = Pattern.compile("usec=(\\d+)").matcher(stats.getProperty(command, ""));
			micros += usec.find() ? Long.parseLong(usec.group(1)) : 0;
		}
		return micros;
	}

	private static long memoryUsage(String key) {
		Long bytes = redis
			.execute(RedisScript.of("return redis.call('MEMORY', 'USAGE', KEYS[1], 'SAMPLES', 0)", Long.class), List.of(key))
			.blockFirst(Duration.ofSeconds(5));
		return (bytes != null) ? bytes : 0;
	}

	/**
	 * An LLM route's token limit on the log, a client sending each call under a fresh key (the key resolver
	 * reads a header): a call estimated at a million tokens must cost Redis one entry, in memory and in time,
	 * not a million; and the upstream refusing it (a 401, refunded whole) gives that memory back. The log
	 * kept one time per unit: 8.4 MB and about 65 ms of Redis per such call, each held for the window.
	 */
	@Test
	void aFreshKeyCostingAMillionUnitsCostsRedisOneEntry() {
		Algorithm ring = Algorithm.SLIDING_LOG;
		WindowPolicy tokens = new WindowPolicy(ring, 1_000_000, Duration.ofMinutes(1));
		// load the script first, so that its compilation is not timed
		requests(ring, RedisKeys.of("warm-up", UUID.randomUUID().toString(), ring.keySuffix()), 1_000_000, 1, 1).block();
		String key = RedisKeys.of("chat", UUID.randomUUID().toString(), ring.keySuffix());
		long before = scriptMicros();
		Verdict reserved = script.decide(List.of(new LimitScript.Limit(key, tokens)), 1_000_000, Long.toString(T0))
			.block(Duration.ofSeconds(30));
		long reserveMicros = scriptMicros() - before;
		long bytes = memoryUsage(key);
		System.out.printf("a fresh key reserving 1,000,000 units: %,d B, %,d us of Redis%n", bytes, reserveMicros);
		assertThat(reserved.allowed()).isTrue();
		assertThat(bytes).as("bytes of the key").isLessThanOrEqualTo(256);
		assertThat(reserveMicros).as("microseconds of Redis").isLessThan(5_000);

		before = scriptMicros();
		Settlement refunded = script.settle(List.of(key), RedisKeys.settledMarkers(key, T0 / 60_000), "1",
				List.of(tokens), List.of(reserved.decisions().get(0).resetMillis()), reserved.now(), 1_000_000, 0,
				Long.toString(T0 + 500))
			.block(Duration.ofSeconds(30));
		long refundMicros = scriptMicros() - before;
		System.out.printf("refunded whole: key %,d B, %,d us of Redis%n", memoryUsage(key), refundMicros);
		assertThat(refunded.changes()).containsExactly(-1_000_000L);
		assertThat(refundMicros).as("microseconds of Redis").isLessThan(5_000);
		assertThat(memoryUsage(key)).as("a log holding nothing is deleted").isZero();

		// many such callers, each under a fresh key, each refused by the upstream: little left for the window
		double perClient = bytesPerClient(ring, 500, fresh -> script
			.decide(List.of(new LimitScript.Limit(fresh, tokens)), 1_000_000, Long.toString(T0))
			.flatMap(verdict -> script.settle(List.of(fresh), RedisKeys.settledMarkers(fresh, T0 / 60_000), "1",
					List.of(tokens), List.of(verdict.decisions().get(0).resetMillis()), verdict.now(), 1_000_000, 0,
					Long.toString(T0 + 500))));
		// what stays is the settle's marker (about 120 B in a fresh hash, a minute): the log is gone
		assertThat(perClient).isLessThanOrEqualTo(400);
	}

	/**
	 * A rolling upgrade meets the largest keys the previous layout made, 8 MB each: a token client's million
	 * units (ten calls of 100,000, one time per token), or a million requests of cost 1 in 50 s. Each is read
	 * once into a key of this layout, in at most 1,024 parts: bounded time, no fresh quota (its units count
	 * as long as they did, those of the million requests up to a part's span, 49 ms, longer), cheap after.
	 */
	@Test
	void theLargestKeysOfThePreviousLayoutAreReadOnceInBoundedTime() {
		WindowPolicy tokens = new WindowPolicy(Algorithm.SLIDING_LOG, 1_000_000, Duration.ofMinutes(1));
		// the previous layout: an 8-byte header (oldest slot, how many), then one big-endian double per unit;
		// ARGV: calls, units per call, first call's time, ms between calls
		String write = "local parts = {struct.pack('>I4I4', 0, tonumber(ARGV[1]) * tonumber(ARGV[2]))} "
				+ "for i = 0, tonumber(ARGV[1]) - 1 do parts[#parts + 1] = string.rep("
				+ "struct.pack('>d', tonumber(ARGV[3]) + math.floor(i * tonumber(ARGV[4]))), tonumber(ARGV[2])) end "
				+ "return redis.call('SET', KEYS[1], table.concat(parts), 'PX', 600000)";
		// warms the script up, on a key of its own
		script.decideOne(RedisKeys.of("warm-up", UUID.randomUUID().toString(), Algorithm.SLIDING_LOG.keySuffix()),
				tokens, 1, Long.toString(T0)).block(Duration.ofSeconds(30));
		for (String[] calls : new String[][] { { "10", "100000", "1000" }, { "1000000", "1", "0.05" } }) {
			String client = UUID.randomUUID().toString();
			redis.execute(RedisScript.of(write, String.class), List.of(RedisKeys.of("chat", client, "ring")),
					List.of(calls[0], calls[1], Long.toString(T0), calls[2]))
				.blockFirst(Duration.ofSeconds(30));
			// the writing left Lua 8 MB of garbage: collected now, not while the next script is timed
			redis.execute(RedisScript.of("collectgarbage('collect') return 1", Long.class)).blockFirst(Duration.ofSeconds(30));
			String key = RedisKeys.of("chat", client, Algorithm.SLIDING_LOG.keySuffix());
			long before = scriptMicros();
			Decision read = script.decideOne(key, tokens, 1, Long.toString(T0 + 55_000)).block(Duration.ofSeconds(30));
			long readMicros = scriptMicros() - before;
			before = scriptMicros();
			Decision again = script.decideOne(key, tokens, 1, Long.toString(T0 + 55_000)).block(Duration.ofSeconds(30));
			long againMicros = scriptMicros() - before;
			System.out.printf("previous layout, %s calls of %s: read in %,d us (key then %,d B), next decision %,d us%n",
					calls[0], calls[1], readMicros, memoryUsage(key), againMicros);
			// full: refused until the first unit, logged at T0, leaves at 60 s; the million requests' first part
			// (977 of them) logged at T0 + 48 ms
			assertThat(read.allowed()).isFalse();
			assertThat(read.retryAfterMillis()).isEqualTo(calls[0].equals("10") ? 5_000 : 5_048);
			assertThat(again).isEqualTo(read);
			assertThat(readMicros).isLessThan(20_000);
			assertThat(againMicros).isLessThan(5_000);
			assertThat(memoryUsage(key)).isLessThan(16_000);
		}
	}

	/**
	 * A refund rewrites the entries on the shorter side of the refunded one: with 2,000 requests of cost 1 before
	 * and after it in the window, that is a few milliseconds at most; a refund among the newest, little.
	 */
	@Test
	void aRefundAmongThousandsOfRequestsCostsLittle() {
		WindowPolicy policy = new WindowPolicy(Algorithm.SLIDING_LOG, 10_000, Duration.ofMinutes(1));
		String key = RedisKeys.of("login", UUID.randomUUID().toString(), Algorithm.SLIDING_LOG.keySuffix());
		List<LimitScript.Limit> limits = List.of(new LimitScript.Limit(key, policy));
		Flux.range(0, 2_000).concatMap(i -> script.decide(limits, 1, Long.toString(T0 + i))).blockLast(Duration.ofMinutes(1));
		Verdict middle = script.decide(limits, 5, Long.toString(T0 + 2_000)).block(Duration.ofSeconds(5));
		Flux.range(0, 2_000).concatMap(i -> script.decide(limits, 1, Long.toString(T0 + 2_001 + i))).blockLast(Duration.ofMinutes(1));
		Verdict newest = script.decide(limits, 5, Long.toString(T0 + 5_000)).block(Duration.ofSeconds(5));
		long[] micros = new long[2];
		int i = 0;
		for (Verdict reserved : List.of(middle, newest)) {
			long before = scriptMicros();
			Settlement refunded = script.settle(limits.stream().map(LimitScript.Limit::key).toList(),
					RedisKeys.settledMarkers(key, T0 / 60_000), "r" + i, List.of(policy),
					List.of(reserved.decisions().get(0).resetMillis()), reserved.now(), 5, 2, Long.toString(T0 + 6_000))
				.block(Duration.ofSeconds(5));
			micros[i++] = scriptMicros() - before;
			assertThat(refunded.changes()).containsExactly(-3L);
		}
		System.out.printf("refund among 4,000 entries: in the middle %,d us, the newest %,d us%n", micros[0], micros[1]);
		assertThat(micros[0]).isLessThan(20_000);
		assertThat(micros[1]).isLessThan(5_000);
		// 4,001 + 4 units left of 10,000
		assertThat(script.decideOne(key, policy, 0, Long.toString(T0 + 6_000)).block(Duration.ofSeconds(5)).remaining())
			.isEqualTo(10_000 - 4_000 - 2 - 2);
	}

	@Test
	void aFullSortedSetCostsWhatItsEntriesCost() {
		// not asserted against the ring: reported for the README's comparison
		assertThat(fullClient(Algorithm.SLIDING_LOG_SORTED_SET, 10_000, 5)).isGreaterThan(8 * 10_000);
	}

}
