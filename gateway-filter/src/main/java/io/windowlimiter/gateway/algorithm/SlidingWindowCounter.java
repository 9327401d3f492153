package io.windowlimiter.gateway.algorithm;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Sliding window counter, decided by {@code sliding_window_counter.lua}: two window counts in one key.
 */
public final class SlidingWindowCounter extends WindowAlgorithm {

	public SlidingWindowCounter(ReactiveStringRedisTemplate redis) {
		super(redis);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_WINDOW_COUNTER;
	}

	@Override
	public String moduleFile() {
		return "sliding_window_counter.lua";
	}

	@Override
	public String keySuffix() {
		return "swc";
	}

}
