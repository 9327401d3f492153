package io.windowlimiter.gateway.scaleout;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.ReadFrom;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.models.partitions.ClusterPartitionParser;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.api.sync.RedisCommands;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisClusterTestServer;
import io.windowlimiter.gateway.test.RedisNode;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How decisions are routed on a Redis Cluster: each client's keys share one slot, clients spread over
 * every master, and decisions run on masters only, even when the application reads from replicas.
 */
class ClusterRoutingTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final int CLIENTS = 300;

	private final RedisClusterTestServer cluster = RedisClusterTestServer.get();

	private static final List<Algorithm> ALGORITHMS = List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG,
			Algorithm.SLIDING_WINDOW_COUNTER);

	/**
	 * A day: a fixed window's key lives until its window ends, so with a minute, keys written at a minute's
	 * last second were gone before they were counted (one run counted 600 of 900).
	 */
	private static WindowPolicy policy(Algorithm algorithm) {
		return new WindowPolicy(algorithm, 10, Duration.ofDays(1));
	}

	@Test
	void eachClientKeepsItsKeysOnOneSlotAndClientsSpreadOverEveryMaster() {
		String route = "spread-" + UUID.randomUUID().toString().substring(0, 8);
		LimitScript script = new LimitScript(this.cluster.template());
		long decided = Flux.range(0, CLIENTS)
			.flatMap(client -> Flux.fromIterable(ALGORITHMS)
				.flatMap(algorithm -> script.decideOne(RedisKeys.of(route, "client-" + client, algorithm.keySuffix()),
						policy(algorithm), 1, "")))
			.filter(Decision::allowed)
			.count()
			.block(TIMEOUT);
		assertThat(decided).isEqualTo(3L * CLIENTS);

		RedisNode anyNode = this.cluster.masters().get(0);
		for (int client = 0; client < CLIENTS; client++) {
			String name = "client-" + client;
			List<Long> slots = ALGORITHMS.stream()
				.map(algorithm -> this.cluster.onNode(anyNode,
						redis -> redis.clusterKeyslot(RedisKeys.of(route, name, algorithm.keySuffix()))))
				.distinct()
				.toList();
			assertThat(slots).as("slots of %s's keys", name).hasSize(1);
		}

		// the masters now: the suite's shared cluster may have failed one over in an earlier test
		Map<RedisNode, Integer> keysPerMaster = new HashMap<>();
		for (RedisNode master : this.cluster.nodes().stream().filter(this.cluster::isMaster).toList()) {
			keysPerMaster.put(master, this.cluster.onNode(master, redis -> redis.keys("wrl:{*}:" + route + ":*")).size());
		}
		assertThat(keysPerMaster).as("masters").hasSize(this.cluster.masters().size());
		assertThat(keysPerMaster.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(3 * CLIENTS);
		// a third each is expected; a hash tag without the client key would put everything on one master
		assertThat(keysPerMaster.values()).as("keys per master").allSatisfy(keys -> assertThat(keys)
			.isBetween(3 * CLIENTS / 5, 3 * CLIENTS / 2));
	}

	/**
	 * Lettuce's cluster writer waits, on the thread that writes, for the first connect to the master of a
	 * command's slot. A decision asked where another's answer arrived (Lettuce's event loop) was written there:
	 * when the connect was given to that same loop it waited for itself, for good (a full run hung 30 s here,
	 * and every later test on the shared connection with it; this test, run before the fix, hung the same way). Each
	 * round is a new client, so every master but
	 * the first is connected for the first time by a decision that follows another's answer.
	 */
	@Test
	void aDecisionThatFollowsAnotherOnANodeNotConnectedYetIsAnswered() throws InterruptedException {
		RedisNode anyNode = this.cluster.masters().get(0);
		Partitions partitions = ClusterPartitionParser
			.parse(this.cluster.<String>onNode(anyNode, redis -> redis.clusterNodes()));
		for (int round = 0; round < 10; round++) {
			String route = "chain-" + round + "-" + UUID.randomUUID().toString().substring(0, 8);
			// one client's key on each master
			Map<String, String> keyByMaster = new HashMap<>();
			for (int client = 0; keyByMaster.size() < partitions.stream().filter(node -> !node.getSlots().isEmpty()).count(); client++) {
				String key = RedisKeys.of(route, "c" + client, Algorithm.FIXED_WINDOW.keySuffix());
				keyByMaster.putIfAbsent(partitions.getMasterBySlot(SlotHash.getSlot(key)).getNodeId(), key);
			}
			LettuceConnectionFactory fresh = this.cluster.connectionFactory(LettuceClientConfiguration.builder());
			try {
				LimitScript script = new LimitScript(new ReactiveStringRedisTemplate(fresh));
				List<String> keys = List.copyOf(keyByMaster.values());
				// chains at once, each through the masters from a different one: Lettuce's loops all write
				Long answered = Flux.range(0, 24).flatMap(chain -> {
					Mono<Decision> decisions = Mono.empty();
					for (int i = 0; i < keys.size(); i++) {
						decisions = decisions.then(script.decideOne(keys.get((chain + i) % keys.size()),
								policy(Algorithm.FIXED_WINDOW), 1, ""));
					}
					return decisions;
				}).count().block(Duration.ofSeconds(10));
				assertThat(answered).as("chains answered, round %d", round).isEqualTo(24);
			}
			finally {
				// on its own daemon thread: a client whose loop waits for itself never finishes closing
				Thread closing = new Thread(fresh::destroy, "closing-" + round);
				closing.setDaemon(true);
				closing.start();
				closing.join(5_000);
			}
		}
	}

	@Test
	void decisionsRunOnMastersEvenWhenTheApplicationReadsFromReplicas() {
		LettuceConnectionFactory readsFromReplicas = this.cluster
			.connectionFactory(LettuceClientConfiguration.builder().readFrom(ReadFrom.REPLICA));
		try {
			ReactiveStringRedisTemplate redis = new ReactiveStringRedisTemplate(readsFromReplicas);
			String route = "replica-" + UUID.randomUUID().toString().substring(0, 8);
			awaitReadsFromReplicas(redis, route);
			Map<RedisNode, Long> evalsBefore = calls("evalsha|eval");
			Map<RedisNode, Long> getsBefore = calls("get");
			LimitScript script = new LimitScript(redis);
			long allowed = Flux.range(0, 100)
				.flatMap(client -> Flux.fromIterable(ALGORITHMS)
					.flatMap(algorithm -> script.decideOne(RedisKeys.of(route, "c" + client, algorithm.keySuffix()),
							policy(algorithm), 1, "")))
				.filter(Decision::allowed)
				.count()
				.block(TIMEOUT);
			assertThat(allowed).isEqualTo(300);
			Flux.range(0, 100).flatMap(client -> redis.opsForValue().get(RedisKeys.of(route, "c" + client, "fl")))
				.blockLast(TIMEOUT);
			Map<RedisNode, Long> evals = delta(evalsBefore, calls("evalsha|eval"));
			Map<RedisNode, Long> gets = delta(getsBefore, calls("get"));

			// the control: this configuration really sends reads to replicas
			assertThat(this.cluster.replicas().stream().mapToLong(gets::get).sum()).as("GETs on replicas")
				.isEqualTo(100);
			assertThat(this.cluster.replicas().stream().mapToLong(evals::get).sum()).as("scripts run on replicas")
				.isZero();
			assertThat(this.cluster.masters().stream().mapToLong(evals::get).sum()).as("scripts run on masters")
				.isGreaterThanOrEqualTo(300);
		}
		finally {
			readsFromReplicas.destroy();
		}
	}

	/**
	 * Lettuce reads only from replicas it has seen replicate something (offset above 0), and learns
	 * of that on a topology refresh; a fresh cluster gets there within seconds.
	 */
	private static void awaitReadsFromReplicas(ReactiveStringRedisTemplate redis, String route) {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (true) {
			try {
				Flux.range(0, 100).flatMap(client -> redis.opsForValue().get(RedisKeys.of(route, "c" + client, "fl")))
					.blockLast(TIMEOUT);
				return;
			}
			catch (RuntimeException notYet) {
				assertThat(System.nanoTime()).as("reads from replicas within 20 s: " + notYet).isLessThan(deadline);
				// writes on every master move their replicas' offsets; then poll again a little later
				Flux.range(0, 30)
					.flatMap(i -> redis.opsForValue().set("warm-up:{" + UUID.randomUUID() + "}", "x", Duration.ofSeconds(10)))
					.blockLast(TIMEOUT);
				RedisNode.pause(Duration.ofMillis(100));
			}
		}
	}

	private static final Pattern CALLS = Pattern.compile("cmdstat_(\\w+):calls=(\\d+)");

	/** Calls per node of the commands matching the given pattern, from INFO commandstats. */
	private Map<RedisNode, Long> calls(String commands) {
		Map<RedisNode, Long> calls = new HashMap<>();
		for (RedisNode node : this.cluster.nodes()) {
			String stats = this.cluster.onNode(node, (RedisCommands<String, String> redis) -> redis.info("commandstats"));
			long sum = 0;
			Matcher matcher = CALLS.matcher(stats);
			while (matcher.find()) {
				if (matcher.group(1).matches(commands)) {
					sum += Long.parseLong(matcher.group(2));
				}
			}
			calls.put(node, sum);
		}
		return calls;
	}

	private static Map<RedisNode, Long> delta(Map<RedisNode, Long> before, Map<RedisNode, Long> after) {
		Map<RedisNode, Long> delta = new HashMap<>();
		after.forEach((node, calls) -> delta.put(node, calls - before.get(node)));
		return delta;
	}

}
