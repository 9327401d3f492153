package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

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
		System.out.print("full client, limit " + limit + ": ");
		return bytesPerClient(algorithm, clients, key -> requests(algorithm, key, limit, limit / 100, 100));
	}

	@Test
	void aFreshKeyCostsLittleWhateverTheLimit() {
		for (Algorithm log : List.of(Algorithm.SLIDING_LOG, Algorithm.SLIDING_LOG_SORTED_SET)) {
			assertThat(freshKey(log, 10_000)).isLessThanOrEqualTo(400);
			assertThat(freshKey(log, 1_000_000)).isLessThanOrEqualTo(400);
		}
	}

	@Test
	void aFullRingCostsAboutEightBytesPerUnitOfLimit() {
		Algorithm ring = Algorithm.SLIDING_LOG;
		// What the ring allocated whole on a client's first request cost before it grew with the traffic,
		// measured so: 83,467 bytes at 10,000 and 8,412,768 at 1,000,000 (jemalloc rounds the value up to
		// its size class). A full ring is no bigger.
		assertThat(fullClient(ring, 10_000, 20)).isLessThanOrEqualTo(8.4 * 10_000);
		assertThat(fullClient(ring, 1_000_000, 1)).isLessThanOrEqualTo(8.45 * 1_000_000);
	}

	@Test
	void aFullSortedSetCostsWhatItsEntriesCost() {
		// not asserted against the ring: reported for the README's comparison
		assertThat(fullClient(Algorithm.SLIDING_LOG_SORTED_SET, 10_000, 5)).isGreaterThan(8 * 10_000);
	}

}
