package io.windowlimiter.gateway.algorithm;

import java.time.Duration;
import java.util.UUID;

import io.windowlimiter.gateway.test.RedisTestServer;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Runs the real scripts on the shared test Redis with an explicit clock, each test on keys of its own.
 */
abstract class ScriptTestSupport {

	static final Duration TIMEOUT = Duration.ofSeconds(5);

	/** 2026-01-01T00:00:00Z: whole minutes, hours and days, so window edges are easy to read. */
	static final long T0 = 1_767_225_600_000L;

	final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	final LimitScript script = new LimitScript(this.redis);

	final String key = "test:{" + UUID.randomUUID() + "}";

	static WindowPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return new WindowPolicy(algorithm, limit, window);
	}

	/** Decides one request of cost 1 on this test's key at {@code now}. */
	Decision decide(WindowPolicy policy, long now) {
		return this.script.decideOne(this.key, policy, 1, Long.toString(now)).block(TIMEOUT);
	}

	/** Sends {@code count} requests at one instant and returns how many were allowed. */
	int burst(WindowPolicy policy, long now, int count) {
		int allowed = 0;
		for (int i = 0; i < count; i++) {
			if (decide(policy, now).allowed()) {
				allowed++;
			}
		}
		return allowed;
	}

	long pttl() {
		return this.redis.getExpire(this.key).block(TIMEOUT).toMillis();
	}

	boolean exists() {
		return Boolean.TRUE.equals(this.redis.hasKey(this.key).block(TIMEOUT));
	}

}
