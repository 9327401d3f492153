package io.windowlimiter.gateway.plan;

import java.util.List;

import io.windowlimiter.gateway.test.RedisClusterTestServer;

/**
 * Plans and scopes with two gateway instances on one Redis Cluster: a route's keys and its scopes' share
 * the client's hash tag, so each decision still runs on one slot (else Redis answers CROSSSLOT).
 */
class PlansClusterTests extends PlansContract {

	@Override
	List<String> redisProperties() {
		return List.of("spring.data.redis.cluster.nodes=" + String.join(",", RedisClusterTestServer.get().nodeAddresses()));
	}

}
