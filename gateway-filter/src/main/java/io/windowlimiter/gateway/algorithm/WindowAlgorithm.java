package io.windowlimiter.gateway.algorithm;

import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * A window algorithm: one Lua module beside its class, which checks one limit without writing and
 * hands back how to record the request. {@link LimitScript} runs the modules of a route's limits in
 * one atomic script. Time comes from Redis so that gateway instances whose clocks differ decide alike.
 */
public abstract class WindowAlgorithm {

	private static final String REDIS_CLOCK = "";

	private final ReactiveStringRedisTemplate redis;

	private volatile LimitScript alone;

	protected WindowAlgorithm(ReactiveStringRedisTemplate redis) {
		this.redis = redis;
	}

	/** Which algorithm this is; its name is the module's name in the script. */
	public abstract Algorithm algorithm();

	/** The Lua module, beside this class, that defines {@code algorithms['<algorithm name>']}. */
	public abstract String moduleFile();

	/** The last part of this algorithm's Redis key, so that two algorithms never read each other's data. */
	public abstract String keySuffix();

	/** The module's extra argument, "" when it takes none. */
	public String extra(WindowPolicy policy) {
		return "";
	}

	/** Decides one request of cost 1 for {@code key} against this one limit, on the Redis server's clock. */
	public Mono<Decision> decide(String key, WindowPolicy policy) {
		return decide(key, policy, REDIS_CLOCK);
	}

	/** As {@link #decide}, at an explicit time in ms since the epoch (for tests and replays). */
	public Mono<Decision> decideAt(String key, WindowPolicy policy, long nowMillis) {
		return decide(key, policy, Long.toString(nowMillis));
	}

	private Mono<Decision> decide(String key, WindowPolicy policy, String now) {
		return alone().decide(List.of(new LimitScript.Limit(this, key, policy)), 1, now)
			.map(verdict -> verdict.decisions().get(0));
	}

	/** The script of this algorithm alone, built on first use. */
	public LimitScript alone() {
		LimitScript script = this.alone;
		if (script == null) {
			script = new LimitScript(this.redis, List.of(this));
			this.alone = script;
		}
		return script;
	}

}
