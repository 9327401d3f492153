package io.windowlimiter.gateway.algorithm;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Sliding log, decided by {@code sliding_log.lua}: a sorted set of accepted requests, exact.
 */
public final class SlidingLog extends WindowAlgorithm {

	public SlidingLog(ReactiveStringRedisTemplate redis) {
		super(redis, "sliding_log.lua");
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_LOG;
	}

	@Override
	public String keySuffix() {
		return "log";
	}

}
