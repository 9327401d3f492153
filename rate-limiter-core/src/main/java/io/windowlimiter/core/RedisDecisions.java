package io.windowlimiter.core;

import java.util.List;

import io.micrometer.core.instrument.Timer;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.CompiledPolicy;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Sends one decision's script to Redis through the {@link RedisGuard}, timed: the policy's keys and arguments
 * in, Redis's verdict out, or the error the fail-mode answers.
 */
final class RedisDecisions {

	private final LimitScript script;

	private final RedisGuard guard;

	private final SlotReleases releases;

	private final RateLimitMetrics metrics;

	RedisDecisions(LimitScript script, RedisGuard guard, SlotReleases releases, RateLimitMetrics metrics) {
		this.script = script;
		this.guard = guard;
		this.releases = releases;
		this.metrics = metrics;
	}

	/** Redis's verdict on the request, timed in {@code gateway.ratelimit.redis}; fails when Redis cannot decide. */
	Mono<Verdict> verdict(String routeId, CompiledPolicy policy, String id, List<String> keys,
			LimitScript.Arguments arguments, long requestId) {
		Timer.Sample sample = this.metrics.startRedis();
		return protect(routeId, policy, id, keys, arguments, requestId)
			.doOnNext(verdict -> this.metrics.stopRedis(sample, routeId, true))
			.doOnError(error -> redisFailed(sample, routeId, error));
	}

	/**
	 * The decision's script through the guard. The script's Mono is lazy: nothing is sent unless the guard lets
	 * the decision go to Redis. A decision that takes concurrency slots and is given up (timed out, stalled, its
	 * client gone) while its command may have been written is answered by the fail-mode, which holds no Redis
	 * slot; its script may still run when Redis answers again and take the slots for a request that never asked
	 * to release them: so the guard sends their release once the node has answered a later call.
	 */
	private Mono<Verdict> protect(String routeId, CompiledPolicy policy, String id, List<String> keys,
			LimitScript.Arguments arguments, long requestId) {
		Mono<Verdict> decision = this.script.decide(policy.decisionKeys(keys, id), arguments);
		Object node = this.script.nodeOf(keys);
		if (policy.concurrency.length == 0) {
			return this.guard.protect(node, decision, this.script.probe(keys));
		}
		return this.guard.protect(node, decision, this.script.probe(keys),
				this.releases.releaseGivenUp(routeId, policy, keys, requestId));
	}

	/** Times only decisions that went to Redis: one failed at once is no 0 ms round trip. */
	private void redisFailed(Timer.@Nullable Sample sample, String routeId, Throwable error) {
		if (!RedisGuard.failedAtOnce(error)) {
			this.metrics.stopRedis(sample, routeId, false);
		}
		else if (RedisGuard.isShed(error)) {
			this.metrics.shed(routeId);
		}
	}

}
