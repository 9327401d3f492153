package io.windowlimiter.gateway.scaleout;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.test.RedisClusterTestServer;
import io.windowlimiter.gateway.test.RedisNode;
import io.windowlimiter.gateway.test.RedisSentinelTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The examples in config/ for a Redis Cluster and for Sentinel start a gateway with the example
 * routes, and its limiter decides on the real topology. Only the node addresses are replaced, by
 * those of servers the test starts.
 */
class ScaleOutConfigTests {

	private static ConfigurableApplicationContext gateway(String redisExample, String nodes) {
		return new SpringApplicationBuilder(GatewayTestApplication.class).run(
				"--spring.config.additional-location=file:../config/gateway-example.yml,file:../config/" + redisExample,
				nodes, "--server.port=0");
	}

	/** A decision of the example's orders route (100 per minute), made through the limiter's SPI. */
	private static void assertDecidesOnRedis(ConfigurableApplicationContext gateway, String client) {
		RateLimiter.Response response = gateway.getBean(WindowRateLimiter.class)
			.isAllowed("orders", client)
			.block(Duration.ofSeconds(10));
		assertThat(response.isAllowed()).isTrue();
		// answers made without Redis (fail-modes) do not claim the route's quota
		assertThat(response.getHeaders()).containsEntry("X-RateLimit-Limit", "100")
			.containsEntry("X-RateLimit-Remaining", "99");
	}

	@Test
	void theClusterExampleDecidesOnACluster() {
		RedisClusterTestServer cluster = RedisClusterTestServer.get();
		String client = UUID.randomUUID().toString();
		try (ConfigurableApplicationContext gateway = gateway("redis-cluster.yml",
				"--spring.data.redis.cluster.nodes=" + String.join(",", cluster.nodeAddresses()))) {
			assertThat(gateway.getBean(LettuceConnectionFactory.class).getClusterConfiguration()).isNotNull();
			assertDecidesOnRedis(gateway, client);
		}
		long keys = cluster.masters()
			.stream()
			.mapToLong(master -> cluster.onNode(master, redis -> redis.keys("*" + stored(client) + "*")).size())
			.sum();
		assertThat(keys).isPositive();
	}

	@Test
	void theSentinelExampleDecidesOnThePrimaryTheSentinelsName() {
		String client = UUID.randomUUID().toString();
		try (RedisSentinelTestServer sentinel = RedisSentinelTestServer.start(Duration.ofSeconds(5));
				ConfigurableApplicationContext gateway = gateway("redis-sentinel.yml",
						"--spring.data.redis.sentinel.nodes=" + String.join(",", sentinel.sentinelAddresses()))) {
			assertThat(gateway.getBean(LettuceConnectionFactory.class).getSentinelConfiguration()).isNotNull();
			assertDecidesOnRedis(gateway, client);
			RedisNode primary = sentinel.primary();
			List<String> keys = sentinel.onNode(primary, redis -> redis.keys("*" + stored(client) + "*"));
			assertThat(keys).isNotEmpty();
		}
	}

	/** The client's X-API-Key as the gateway keeps it: a credential, hashed (no secret is set here). */
	private static String stored(String client) {
		return new io.windowlimiter.core.key.ClientKeyHash(null).of(client);
	}

}
