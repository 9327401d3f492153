package io.windowlimiter.gateway.scaleout;

import java.util.List;

import io.windowlimiter.gateway.test.RedisClusterTestServer;

/** Two gateway instances on one Redis Cluster, configured as users do: by its nodes. */
class MultiInstanceClusterTests extends MultiInstanceContract {

	@Override
	List<String> redisProperties() {
		return List.of("spring.data.redis.cluster.nodes=" + String.join(",", RedisClusterTestServer.get().nodeAddresses()));
	}

}
