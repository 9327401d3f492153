package io.windowlimiter.gateway.algorithm;

import java.util.List;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Token bucket as GCRA, decided by {@code token_bucket.lua}: one key holding the theoretical arrival
 * time, so a high limit with bursts costs as little as a low one.
 */
public final class TokenBucket extends WindowAlgorithm {

	public TokenBucket(ReactiveStringRedisTemplate redis) {
		super(redis, "token_bucket.lua");
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.TOKEN_BUCKET;
	}

	@Override
	public String keySuffix() {
		return "tb";
	}

	@Override
	protected List<String> args(WindowPolicy policy, String now) {
		return List.of(Long.toString(policy.limit()), Long.toString(policy.windowMillis()), now,
				Long.toString(policy.burst()));
	}

}
