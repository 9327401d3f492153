package io.windowlimiter.gateway.algorithm;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Sliding log in a ring of the last {@code limit} accepted times, decided by {@code sliding_log.lua}:
 * exact, 8 bytes per unit of limit whatever the traffic. The default storage of {@code sliding-log}.
 */
public final class SlidingLog extends WindowAlgorithm {

	public SlidingLog(ReactiveStringRedisTemplate redis) {
		super(redis);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_LOG;
	}

	@Override
	public String moduleFile() {
		return "sliding_log.lua";
	}

	@Override
	public String keySuffix() {
		return "log";
	}

}
