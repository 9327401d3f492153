package io.windowlimiter.gateway.algorithm;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Sliding log in a ring of the accepted times still in the window, decided by {@code sliding_log.lua}:
 * exact, about 8 bytes per request in the window (never more than 8 per unit of limit). The default
 * storage of {@code sliding-log}.
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
		// not "log": keys of the earlier ring layout (limit in the header, every slot allocated) must not
		// be read as this one while instances of both versions share a Redis
		return "ring";
	}

}
