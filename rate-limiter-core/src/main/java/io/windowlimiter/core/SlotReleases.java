package io.windowlimiter.core;

import java.util.List;
import java.util.function.IntPredicate;

import io.windowlimiter.core.RateLimiterCore.Released;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.CompiledPolicy;
import reactor.core.publisher.Mono;

/**
 * Gives back the concurrency slots a request took in Redis: when its response has ended, and when its decision
 * was given up while its script may still run. Each release is one call of the release script through the
 * guard, its outcome counted; a client refused for want of those slots is decided by Redis again.
 */
final class SlotReleases {

	private final LimitScript script;

	private final RedisGuard guard;

	private final DenyCache denyCache;

	private final RateLimitMetrics metrics;

	SlotReleases(LimitScript script, RedisGuard guard, DenyCache denyCache, RateLimitMetrics metrics) {
		this.script = script;
		this.guard = guard;
		this.denyCache = denyCache;
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
		String denyKey = DenyCache.keyOf(policy, all);
		IntPredicate bySlots = bySlots(policy);
		String id = reservation.id();
		// forgotten as the release goes, so a client asking again as Redis frees the slot is not refused from
		// memory; and again on the reply, for a refusal Redis gave meanwhile
		return Mono.defer(() -> {
			this.denyCache.forget(denyKey, bySlots);
			return released(keys, id, denyKey, bySlots);
		})
			.onErrorResume(error -> {
				Mono<Released> later = released(keys, id, denyKey, bySlots).onErrorResume(again -> Mono.just(Released.DROPPED))
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
		// a client refused for want of the slots this held is decided by Redis again
		return released(slots, Reservation.idText(requestId), DenyCache.keyOf(policy, keys), bySlots(policy))
			.onErrorResume(error -> Mono.just(Released.DROPPED))
			.doOnNext(released -> this.metrics.givenUpRelease(routeId, released.tag));
	}

	/**
	 * Which of the policy's limits a released slot can change: its concurrency limits. A refusal by a limit of
	 * requests per window stays as true as it was when a call ends, so it stays remembered.
	 */
	private static IntPredicate bySlots(CompiledPolicy policy) {
		return limit -> policy.policies.get(limit).algorithm().countsRequests();
	}

	/** The release script for one request's slots, through the guard; fails when Redis cannot take it. */
	private Mono<Released> released(List<String> keys, String id, String denyKey, IntPredicate bySlots) {
		return Mono.defer(() -> this.guard.protect(this.script.nodeOf(keys), this.script.release(keys, id),
				this.script.probe(keys)))
			.map(removed -> (removed > 0) ? Released.RELEASED : Released.GONE)
			.doOnNext(released -> this.denyCache.forget(denyKey, bySlots));
	}

}
