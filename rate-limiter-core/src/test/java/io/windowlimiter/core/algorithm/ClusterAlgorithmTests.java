package io.windowlimiter.core.algorithm;

import io.windowlimiter.gateway.test.RedisClusterTestServer;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * The algorithm suite on a real Redis Cluster of three masters with a replica each. A CROSSSLOT or
 * MOVED error, or a script touching a key of another slot, would fail these tests.
 */
class ClusterAlgorithmTests extends AlgorithmContract {

	@Override
	ReactiveStringRedisTemplate redis() {
		return RedisClusterTestServer.get().template();
	}

	@Override
	void flushScripts() {
		RedisClusterTestServer.get().flushScripts();
	}

}
