package io.windowlimiter.core.algorithm;

import io.windowlimiter.gateway.test.RedisTestServer;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/** The algorithm suite on one standalone Redis. */
class StandaloneAlgorithmTests extends AlgorithmContract {

	@Override
	ReactiveStringRedisTemplate redis() {
		return RedisTestServer.get().template();
	}

	@Override
	void flushScripts() {
		RedisTestServer.get().flushScripts();
	}

}
