package io.windowlimiter.gateway.plan;

import java.util.List;

import io.windowlimiter.gateway.test.RedisTestServer;

/** Plans and scopes with two gateway instances on one standalone Redis. */
class PlansStandaloneTests extends PlansContract {

	@Override
	List<String> redisProperties() {
		RedisTestServer redis = RedisTestServer.get();
		return List.of("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

}
