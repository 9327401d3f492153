package io.windowlimiter.gateway.algorithm;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Sliding log in a sorted set, decided by {@code sliding_log_sorted_set.lua}: exact, one member per
 * accepted request, readable with ZRANGE. Selected per route with {@code log-storage: sorted-set}.
 */
public final class SlidingLogSortedSet extends WindowAlgorithm {

	public SlidingLogSortedSet(ReactiveStringRedisTemplate redis) {
		super(redis);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_LOG_SORTED_SET;
	}

	@Override
	public String moduleFile() {
		return "sliding_log_sorted_set.lua";
	}

	@Override
	public String keySuffix() {
		return "zlog";
	}

}
