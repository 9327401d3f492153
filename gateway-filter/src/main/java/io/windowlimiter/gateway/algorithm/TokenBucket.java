package io.windowlimiter.gateway.algorithm;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Token bucket as GCRA, decided by {@code token_bucket.lua}: one key holding the theoretical arrival
 * time, so a high limit with bursts costs as little as a low one.
 */
public final class TokenBucket extends WindowAlgorithm {

	public TokenBucket(ReactiveStringRedisTemplate redis) {
		super(redis);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.TOKEN_BUCKET;
	}

	@Override
	public String moduleFile() {
		return "token_bucket.lua";
	}

	@Override
	public String keySuffix() {
		return "tb";
	}

	@Override
	public String extra(WindowPolicy policy) {
		return Long.toString(policy.burst());
	}

}
