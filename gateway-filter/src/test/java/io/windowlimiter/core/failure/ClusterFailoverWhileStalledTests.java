package io.windowlimiter.core.failure;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.SlotHash;
import io.netty.channel.DefaultEventLoop;
import io.windowlimiter.core.DecisionWarmUp;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.test.RedisClusterTestServer;
import io.windowlimiter.gateway.test.RedisNode;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review m3: a cluster master frozen (SIGSTOP) while decisions wait on it, so the guard takes it as stalled,
 * then failed over (its replica takes over with {@code CLUSTER FAILOVER TAKEOVER}) while still frozen. The
 * frozen node never answers as a master again; before, only a reply from it cleared its stall, so the guard
 * stayed stalled (health DEGRADED) and kept its places in flight until a restart. Now a node the client no
 * longer routes to (once its view of the slots follows the failover: the topology refresh, every 1 s here, which
 * waits for the frozen node up to Lettuce's command timeout, 2 s here) is
 * forgotten: the guard is no longer stalled, its places are given back, and the slot's clients are decided by
 * the new master, every answer within the bound meanwhile.
 */
class ClusterFailoverWhileStalledTests {

	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(400);

	private static final Duration BOUND = TIMEOUT.plus(STALL.dividedBy(4));

	private static final Duration REFRESH = Duration.ofSeconds(1);

	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	/** From the takeover until the slot's decisions go to the new master: the refresh, and its reads of the nodes. */
	private static final Duration FOLLOWED_WITHIN = Duration.ofSeconds(15);

	@Test
	void aMasterFailedOverWhileStalledStopsCountingAsStalled() throws Exception {
		DefaultEventLoop loop = new DefaultEventLoop();
		try (RedisClusterTestServer cluster = RedisClusterTestServer.start(Duration.ofSeconds(5));
				RedisGuard guard = new RedisGuard(TIMEOUT, STALL, Duration.ofSeconds(10))) {
			ClusterClientOptions options = ClusterClientOptions.builder()
				.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
					.enablePeriodicRefresh(REFRESH)
					.enableAllAdaptiveRefreshTriggers()
					.adaptiveRefreshTriggersTimeout(REFRESH)
					.build())
				.build();
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisClusterConfiguration(cluster.nodeAddresses()),
					// Lettuce's topology refresh waits for every node's answer up to the command timeout: a frozen node
					// holds each refresh that long (Boot's default, 60 s)
					LettuceClientConfiguration.builder().clientOptions(options).commandTimeout(COMMAND_TIMEOUT).build());
			factory.afterPropertiesSet();
			factory.start();
			try {
				LimitScript script = new LimitScript(new ReactiveStringRedisTemplate(factory));
				new DecisionWarmUp(script, Duration.ofSeconds(10)).start();
				WindowRateLimiter limiter = WindowRateLimiter.of(script, guard, new DenyCache(1_000, System::nanoTime),
						new LocalWindowLimiter(1_000), Clock.systemUTC());
				limiter.onApplicationEvent(new FilterArgsEvent(this, "open", Map.of("window-rate-limiter.limit", "1000000",
						"window-rate-limiter.window", "1m", "window-rate-limiter.fail-mode", "open")));
				RedisNode master = cluster.masters().get(0);
				RedisNode replica = cluster.replicas().get(0);
				String client = clientOn(master);
				assertThat(decidedByRedis(limiter, loop, client)).as("before the freeze").isTrue();

				master.freeze();
				long slowest = 0;
				try {
					// the decisions in flight wait the stall timeout: the node is stalled
					long start = System.nanoTime();
					assertThat(decidedByRedis(limiter, loop, client)).isFalse();
					slowest = System.nanoTime() - start;
					assertThat(guard.isStalled()).as("the frozen master is stalled").isTrue();
					cluster.onNode(replica, redis -> redis.clusterFailover(false, true));
					long tookOver = System.nanoTime();
					boolean byRedis = false;
					while (!byRedis || guard.isStalled()) {
						assertThat(System.nanoTime() - tookOver).as("the failover followed within " + FOLLOWED_WITHIN
								+ "; stalled " + guard.isStalled() + ", in flight " + guard.inFlight())
							.isLessThan(FOLLOWED_WITHIN.toNanos());
						long asked = System.nanoTime();
						byRedis = decidedByRedis(limiter, loop, client);
						slowest = Math.max(slowest, System.nanoTime() - asked);
						Thread.sleep(50);
					}
					System.out.println("[cluster failover while stalled] followed " + (System.nanoTime() - tookOver) / 1_000_000
							+ " ms after the takeover; stalled " + guard.isStalled() + ", in flight " + guard.inFlight()
							+ "; slowest answer " + slowest / 1_000_000 + " ms");
					assertThat(guard.isStalled()).as("stalled once the failover is followed").isFalse();
					assertThat(guard.inFlight()).as("places in flight once the failover is followed").isZero();
					assertThat(Duration.ofNanos(slowest)).as("the slowest answer").isLessThanOrEqualTo(BOUND);
					assertThat(cluster.isMaster(replica)).as("the replica took over").isTrue();
				}
				finally {
					master.thaw();
				}
			}
			finally {
				factory.destroy();
				loop.shutdownGracefully();
			}
		}
	}

	/** Whether Redis decided (a fail-mode open answer carries no quota headers). */
	private static boolean decidedByRedis(WindowRateLimiter limiter, DefaultEventLoop loop, String client) {
		Response response = Mono.defer(() -> limiter.isAllowed("open", client))
			.subscribeOn(Schedulers.fromExecutor(loop))
			.block(Duration.ofSeconds(5));
		return response.getHeaders().containsKey("X-RateLimit-Limit");
	}

	/** A client key whose slot the node serves (the first master holds the first third of the slots). */
	private static String clientOn(RedisNode master) {
		for (int i = 0;; i++) {
			String client = "client-" + i;
			if (SlotHash.getSlot(client) < RedisClusterTestServer.SLOTS / 3) {
				return client;
			}
		}
	}

}
