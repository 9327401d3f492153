package io.windowlimiter.core.failure;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import io.lettuce.core.cluster.SlotHash;
import io.netty.channel.DefaultEventLoop;
import io.windowlimiter.core.DecisionWarmUp;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.gateway.test.RedisClusterTestServer;
import io.windowlimiter.gateway.test.RedisNode;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One master of a 3-master cluster frozen (SIGSTOP, shorter than the cluster's failover detection): only the
 * clients whose keys live on it get the fail-mode, within the bound; the others keep being decided by Redis
 * at normal latency, since the guard judges each node's progress on its own.
 */
class ClusterNodeFaultTests {

	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(400);

	private static final Duration BOUND = TIMEOUT.plus(STALL.dividedBy(4));

	@Test
	void aFrozenMasterTouchesOnlyTheClientsOnIt() {
		DefaultEventLoop loop = new DefaultEventLoop();
		// the suite's shared cluster: frozen 2 s, well within its 5 s failover detection
		RedisClusterTestServer cluster = RedisClusterTestServer.get();
		try (RedisGuard guard = new RedisGuard(TIMEOUT, STALL, Duration.ofSeconds(10))) {
			LettuceConnectionFactory factory = cluster.connectionFactory();
			LimitScript script = new LimitScript(new ReactiveStringRedisTemplate(factory));
			new DecisionWarmUp(script, Duration.ofSeconds(10)).start();
			WindowRateLimiter limiter = WindowRateLimiter.of(script, guard, new DenyCache(1_000, System::nanoTime),
					new LocalWindowLimiter(1_000), Clock.systemUTC());
			limiter.onApplicationEvent(new FilterArgsEvent(this, "open", Map.of("window-rate-limiter.limit", "1000000",
					"window-rate-limiter.window", "1m", "window-rate-limiter.fail-mode", "open")));
			RedisNode frozen = cluster.masters().get(0);
			String onFrozen = clientOn(factory, frozen, true);
			String elsewhere = clientOn(factory, frozen, false);
			assertThat(decide(limiter, loop, onFrozen).getHeaders()).containsKey("X-RateLimit-Limit");

			frozen.freeze();
			long healthySlowest = 0;
			long frozenSlowest = 0;
			int healthyByRedis = 0;
			int healthy = 0;
			int frozenWaited = 0;
			try {
				long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
				while (System.nanoTime() < end) {
					long start = System.nanoTime();
					Response other = decide(limiter, loop, elsewhere);
					healthySlowest = Math.max(healthySlowest, System.nanoTime() - start);
					healthy++;
					healthyByRedis += other.getHeaders().containsKey("X-RateLimit-Limit") ? 1 : 0;
					start = System.nanoTime();
					decide(limiter, loop, onFrozen);
					long waited = System.nanoTime() - start;
					frozenSlowest = Math.max(frozenSlowest, waited);
					frozenWaited += (waited > STALL.toNanos() / 4) ? 1 : 0;
				}
			}
			finally {
				frozen.thaw();
				loop.shutdownGracefully();
			}
			System.out.println("Cluster master frozen 2 s: " + healthyByRedis + " of " + healthy
					+ " decisions elsewhere decided by Redis, slowest " + healthySlowest / 1_000_000 + " ms; on the frozen master "
					+ frozenWaited + " waited, slowest " + frozenSlowest / 1_000_000 + " ms");
			assertThat(healthyByRedis).as("decisions on the healthy masters decided by Redis").isEqualTo(healthy);
			assertThat(Duration.ofNanos(healthySlowest)).as("slowest on a healthy master").isLessThan(Duration.ofMillis(100));
			assertThat(Duration.ofNanos(frozenSlowest)).as("slowest on the frozen master").isLessThanOrEqualTo(BOUND);
			// the first waits the stall timeout; then one trial at most every two stall timeouts: 2 s / 0.8 s
			assertThat(frozenWaited).as("decisions that waited on the frozen master, of %d", healthy).isLessThanOrEqualTo(4);
		}
	}

	private static Response decide(WindowRateLimiter limiter, DefaultEventLoop loop, String client) {
		return Mono.defer(() -> limiter.isAllowed("open", client))
			.subscribeOn(Schedulers.fromExecutor(loop))
			.block(Duration.ofSeconds(5));
	}

	/** A client key whose slot is (or is not) served by the node. */
	private static String clientOn(LettuceConnectionFactory factory, RedisNode node, boolean on) {
		try (var connection = factory.getClusterConnection()) {
			for (int i = 0;; i++) {
				String client = "client-" + i;
				RedisClusterNode owner = connection.clusterGetNodeForSlot(SlotHash.getSlot(client));
				if ((owner.getPort() == node.port()) == on) {
					return client;
				}
			}
		}
	}

}
