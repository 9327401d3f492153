package io.windowlimiter.core;

import java.util.List;

import io.windowlimiter.core.RateLimiterCore.Released;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.CompiledPolicy;
import reactor.core.publisher.Mono;

/**
 * Gives back the concurrency slots a request took in Redis: when its response has ended, and when its decision
 * was given up while its script may still run. Each release is one call of the release script through the
 * guard, its outcome counted. A refusal for want of slots is never remembered (see {@link Answers}), so a client
 * refused so is decided by Redis again at once, whichever instance frees its slots.
 */
final class SlotReleases {

	private final LimitScript script;

	private final RedisGuard guard;

	private final RateLimitMetrics metrics;

	SlotReleases(LimitScript script, RedisGuard guard, RateLimitMetrics metrics) {
		this.script = script;
		this.guard = guard;
		this.metrics = metrics;
	}

	/**
	 * Releases the concurrency slots a reservation took, once its response has ended: one Redis call through
	 * the same guard as settles (bounded by {@code redis-timeout}, refused at once while Redis is stalled). A
	 * release Redis cannot take then (stalled, down, timed out, too many waiting) is kept by the guard and sent
	 * once more when Redis answers again ({@code deferred}; its outcome counted in
	 * {@code gateway.ratelimit.releases.deferred}): dropped, the slots stayed held until their window ended, a
	 * client refused for the whole window after a freeze of seconds. Dropped only beyond the guard's bound of
	 * kept calls, or when Redis cannot take the second send either. Idempotent in Redis (removing an id twice
	 * removes it once), so the second send harms nothing if the first was written and ran on thawing. Never fails.
	 */
	Mono<Released> release(Reservation reservation) {
		CompiledPolicy policy = reservation.policy();
		List<String> all = reservation.keys();
		List<String> keys = policy.concurrencyKeys(all);
		String routeId = reservation.routeId();
		String id = reservation.id();
		return Mono.defer(() -> released(keys, id))
			.onErrorResume(error -> {
				Mono<Released> later = released(keys, id).onErrorResume(again -> Mono.just(Released.DROPPED))
					.doOnNext(released -> this.metrics.deferredRelease(routeId, released.tag));
				return Mono.just(this.guard.sendWhenAnswering(error, this.script.nodeOf(keys), later,
						this.script.probe(keys)) ? Released.DEFERRED : Released.DROPPED);
			})
			.doOnNext(released -> this.metrics.release(routeId, released.tag));
	}

	/**
	 * Releases the slots a given-up decision's script may have taken: through the guard (bounded, refused at once
	 * while the node stalls), never queued or retried; counted in {@code gateway.ratelimit.releases.given_up}
	 * ({@code released}: its script had run and held them; {@code gone}: it held none, it never ran or was
	 * refused; {@code dropped}: Redis could not take it, the slots expire after their window). Never fails.
	 */
	Mono<Released> releaseGivenUp(String routeId, CompiledPolicy policy, List<String> keys, long requestId) {
		List<String> slots = policy.concurrencyKeys(keys);
		return released(slots, Reservation.idText(requestId))
			.onErrorResume(error -> Mono.just(Released.DROPPED))
			.doOnNext(released -> this.metrics.givenUpRelease(routeId, released.tag));
	}

	/** The release script for one request's slots, through the guard; fails when Redis cannot take it. */
	private Mono<Released> released(List<String> keys, String id) {
		return Mono.defer(() -> this.guard.protect(this.script.nodeOf(keys), this.script.release(keys, id),
				this.script.probe(keys)))
			.map(removed -> (removed > 0) ? Released.RELEASED : Released.GONE);
	}

}
