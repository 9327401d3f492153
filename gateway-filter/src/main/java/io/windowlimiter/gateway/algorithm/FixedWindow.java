package io.windowlimiter.gateway.algorithm;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Fixed window, decided by {@code fixed_window.lua}: one counter per clock-aligned window.
 */
public final class FixedWindow extends WindowAlgorithm {

	public FixedWindow(ReactiveStringRedisTemplate redis) {
		super(redis);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.FIXED_WINDOW;
	}

	@Override
	public String moduleFile() {
		return "fixed_window.lua";
	}

	@Override
	public String keySuffix() {
		return "fw";
	}

}
