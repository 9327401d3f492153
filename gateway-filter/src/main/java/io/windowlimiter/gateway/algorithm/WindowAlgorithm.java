package io.windowlimiter.gateway.algorithm;

import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A window algorithm: one Lua script, run atomically in one round trip by SHA (Spring Data Redis
 * falls back to EVAL when Redis answers NOSCRIPT).
 *
 * <p>Every script takes {@code KEYS[1]} = the client's key and {@code ARGV} = limit, window in ms,
 * now in ms (empty: Redis's own clock), then any arguments of its own, and replies {allowed,
 * remaining, reset ms, retry-after ms}.
 * Time comes from Redis so that gateway instances whose clocks differ still decide alike.
 */
public abstract class WindowAlgorithm {

	private static final String REDIS_CLOCK = "";

	private final ReactiveStringRedisTemplate redis;

	@SuppressWarnings({ "rawtypes", "unchecked" })
	private final RedisScript<List<Long>> script;

	@SuppressWarnings({ "rawtypes", "unchecked" })
	protected WindowAlgorithm(ReactiveStringRedisTemplate redis, String scriptFile) {
		this.redis = redis;
		this.script = (RedisScript) RedisScript.of(new ClassPathResource(scriptFile, getClass()), List.class);
	}

	/** Which algorithm this is. */
	public abstract Algorithm algorithm();

	/** The last part of this algorithm's Redis key, so that two algorithms never read each other's data. */
	public abstract String keySuffix();

	/** Decides one request for {@code key} on the Redis server's clock. */
	public Mono<Decision> decide(String key, WindowPolicy policy) {
		return run(key, policy, REDIS_CLOCK);
	}

	/** Decides one request for {@code key} at an explicit time, in ms since the epoch (for tests and replays). */
	public Mono<Decision> decideAt(String key, WindowPolicy policy, long nowMillis) {
		return run(key, policy, Long.toString(nowMillis));
	}

	private Mono<Decision> run(String key, WindowPolicy policy, String now) {
		return this.redis.execute(this.script, List.of(key), args(policy, now)).next().map(Decision::fromReply);
	}

	/** The script's ARGV: limit, window in ms and now; an algorithm that needs more adds it. */
	protected List<String> args(WindowPolicy policy, String now) {
		return List.of(Long.toString(policy.limit()), Long.toString(policy.windowMillis()), now);
	}

	/** The script, e.g. for tests that run it by hand. */
	public RedisScript<List<Long>> script() {
		return this.script;
	}

}
