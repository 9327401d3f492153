package io.windowlimiter.gateway.scaleout;

import java.util.List;

import io.windowlimiter.gateway.test.RedisTestServer;

/** Two gateway instances on one standalone Redis. */
class MultiInstanceStandaloneTests extends MultiInstanceContract {

	@Override
	List<String> redisProperties() {
		RedisTestServer redis = RedisTestServer.get();
		return List.of("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

}
