package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.windowlimiter.gateway.test.RedisTestServer;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs the real scripts on the shared test Redis with an explicit clock, each test on keys of its own.
 */
abstract class ScriptTestSupport {

	static final Duration TIMEOUT = Duration.ofSeconds(5);

	/** 2026-01-01T00:00:00Z: whole minutes, hours and days, so window edges are easy to read. */
	static final long T0 = 1_767_225_600_000L;

	/** 2025-01-01T00:00:00Z, from which the fixed window and the counter count their stored times. */
	static final long Y2025 = 1_735_689_600_000L;

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

	String stored() {
		return this.redis.opsForValue().get(this.key).block(TIMEOUT);
	}

	/** Writes the key as another version of the limiter would have, expiring in ten minutes. */
	void store(String value) {
		this.redis.opsForValue().set(this.key, value, Duration.ofMinutes(10)).block(TIMEOUT);
	}

	/** How Redis holds the key's value: "int" is 16 bytes whatever the digits, "embstr" a string. */
	String encoding() {
		return this.redis
			.execute(RedisScript.of("return redis.call('OBJECT', 'ENCODING', KEYS[1])", String.class),
					List.of(this.key))
			.blockFirst(TIMEOUT);
	}

	boolean exists() {
		return Boolean.TRUE.equals(this.redis.hasKey(this.key).block(TIMEOUT));
	}

}
