package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.Settlement;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.metering.LlmPrices;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Settles reservations to what their requests actually cost, once each response has told it: the settle
 * script through the guard, kept and sent once more when Redis cannot take it, its outcome counted. A
 * reservation settles once (a second settle sends nothing) and leaves {@link ReservationsHere} as it does.
 */
final class Settles {

	/** Time from the Redis server's clock: the settle script reads the clock it settles by there. */
	private static final String REDIS_CLOCK = "";

	/**
	 * How long after its first send a settle that may have run is sent again: the settle script's marker, which
	 * makes a second run change nothing, lives a minute from the run that wrote it (settle.lua), and that run came
	 * after the first send; the margin covers the second send's own wait ({@code redis-timeout}, a second at most).
	 */
	static final Duration SETTLE_SENT_AGAIN_WITHIN = Duration.ofSeconds(50);

	private final LimitScript script;

	private final RedisGuard guard;

	private final DenyCache denyCache;

	private final RateLimitMetrics metrics;

	private final ReservationsHere reservationsHere;

	private final Clock clock;

	Settles(LimitScript script, RedisGuard guard, DenyCache denyCache, RateLimitMetrics metrics,
			ReservationsHere reservationsHere, Clock clock) {
		this.script = script;
		this.guard = guard;
		this.denyCache = denyCache;
		this.metrics = metrics;
		this.reservationsHere = reservationsHere;
		this.clock = clock;
	}

	/** As {@link RateLimiterCore#settle(Reservation, long)} says: to one actual cost, all of its limits. */
	Mono<Settled> settle(Reservation reservation, long actualCost) {
		if (actualCost < 0) {
			return Mono.error(new IllegalArgumentException("A cost is 0 or more, was " + actualCost));
		}
		String routeId = reservation.routeId();
		if (!reservation.claim()) {
			this.metrics.settle(routeId, Settled.DUPLICATE.tag);
			return Mono.just(Settled.DUPLICATE);
		}
		this.reservationsHere.remove(reservation);
		if (actualCost == reservation.cost()) {
			this.metrics.settle(routeId, Settled.UNCHANGED.tag);
			return Mono.just(Settled.UNCHANGED);
		}
		return sent(reservation, this.script.settle(reservation.keys(), reservation.markers(this.clock.millis()),
				reservation.id(), reservation.policies(), reservation.resets(), reservation.reservedAt(),
				reservation.cost(), actualCost, REDIS_CLOCK), (actualCost < reservation.cost()) ? limit -> true : null);
	}

	/** As {@link RateLimiterCore#settle(Reservation, long[])} says: to an actual cost per limit. */
	Mono<Settled> settle(Reservation reservation, long[] actualCosts) {
		long[] reserved = reservation.costs();
		if (actualCosts.length != reserved.length) {
			return Mono.error(new IllegalArgumentException("One actual cost per limit: " + reserved.length));
		}
		boolean[] refunded = new boolean[reserved.length];
		boolean refund = false;
		int changed = 0;
		for (int i = 0; i < reserved.length; i++) {
			if (actualCosts[i] < 0) {
				return Mono.error(new IllegalArgumentException("A cost is 0 or more, was " + actualCosts[i]));
			}
			changed += (actualCosts[i] != reserved[i]) ? 1 : 0;
			refunded[i] = actualCosts[i] < reserved[i];
			refund |= refunded[i];
		}
		String routeId = reservation.routeId();
		if (!reservation.claim()) {
			this.metrics.settle(routeId, Settled.DUPLICATE.tag);
			return Mono.just(Settled.DUPLICATE);
		}
		// settled from here on (a settle Redis drops leaves it charged as reserved, no longer outstanding)
		this.reservationsHere.remove(reservation);
		if (changed == 0) {
			this.metrics.settle(routeId, Settled.UNCHANGED.tag);
			return Mono.just(Settled.UNCHANGED);
		}
		return sent(reservation, settleChanged(reservation, reserved, actualCosts, changed),
				refund ? limit -> refunded[limit] : null);
	}

	/** As {@link RateLimiterCore#settleTokens} says: each limit counting tokens to the tokens used. */
	Mono<Settled> settleTokens(Reservation reservation, long actualTokens) {
		return settle(reservation, withTokens(reservation, actualTokens));
	}

	/** The reservation's costs with each limit counting tokens at {@code actualTokens}, the others as reserved. */
	private static long[] withTokens(Reservation reservation, long actualTokens) {
		long[] costs = reservation.costs();
		for (int i : reservation.policy().tokenLimits) {
			costs[i] = actualTokens;
		}
		return costs;
	}

	/** As {@link RateLimiterCore#settleCall} says: tokens to the tokens used, money to their price. */
	Mono<Settled> settleCall(Reservation reservation, LlmCharge charge) {
		long[] costs = withTokens(reservation, charge.tokens());
		CompiledPolicy policy = reservation.policy();
		for (int i : policy.moneyLimits) {
			// more than the limit refuses the client until its window ends as the limit does, and keeps the
			// count far from 2^53 whatever figures an upstream reports
			costs[i] = Math.min(charge.microDollars(), policy.policies.get(i).limit());
		}
		LlmPrices.Price price = reservation.price();
		if (price != null) {
			this.metrics.llmSpend(reservation.routeId(), price.entry(), reservation.microDollars(), charge.microDollars());
		}
		return settle(reservation, costs);
	}

	/**
	 * The settle script's call through the guard, its outcome counted: the one way both settles go to Redis. A
	 * settle Redis cannot take (stalled, down, timed out, too many waiting) is kept by the guard and sent once
	 * more when Redis answers again ({@code deferred}; its outcome counted in
	 * {@code gateway.ratelimit.settles.deferred}), the same command (the same markers): dropped, the client
	 * stayed charged its whole reservation. Sent twice, the settle script applies it once while its marker lives
	 * (a minute from the run that wrote it): a settle that may have been written (it timed out rather than
	 * failing at once) is therefore sent again only within {@link #SETTLE_SENT_AGAIN_WITHIN} of its first send,
	 * and dropped after; one that failed at once was never written, and goes whenever Redis answers.
	 * @param refunded which limits cost less than they reserved (a refund), by position; null for none
	 */
	private Mono<Settled> sent(Reservation reservation, Mono<Settlement> call, @Nullable IntPredicate refunded) {
		List<String> keys = reservation.keys();
		String routeId = reservation.routeId();
		return Mono.defer(() -> {
			long first = System.nanoTime();
			return settled(reservation, call, refunded).onErrorResume(error -> {
				boolean written = !RedisGuard.failedAtOnce(error);
				Mono<Settled> later = Mono.defer(() -> (written
						&& System.nanoTime() - first > SETTLE_SENT_AGAIN_WITHIN.toNanos())
						? Mono.just(Settled.DROPPED) : settled(reservation, call, refunded))
					.onErrorResume(again -> Mono.just(Settled.DROPPED))
					.doOnNext(settled -> this.metrics.deferredSettle(routeId, settled.tag));
				return Mono.just(this.guard.sendWhenAnswering(error, this.script.nodeOf(keys), later,
						this.script.probe(keys)) ? Settled.DEFERRED : Settled.DROPPED);
			});
		}).doOnNext(settled -> this.metrics.settle(routeId, settled.tag));
	}

	/** The settle script's call through the guard; fails when Redis cannot take it. */
	private Mono<Settled> settled(Reservation reservation, Mono<Settlement> call, @Nullable IntPredicate refunded) {
		List<String> keys = reservation.keys();
		return this.guard.protect(this.script.nodeOf(keys), call, this.script.probe(keys))
			.map(settlement -> settlement.applied() ? Settled.APPLIED : Settled.DUPLICATE)
			.doOnNext(settled -> {
				if (settled == Settled.APPLIED && refunded != null) {
					// a refund may let the client in before a denial remembered meanwhile ends: of the limit refunded
					// only (tokens given back leave a refusal by the request limit as true as it was)
					this.denyCache.forget(DenyCache.keyOf(reservation.policy(), keys), refunded);
				}
			});
	}

	/**
	 * The settle script for the limits whose cost changed, only: an LLM route's request limits keep the 1 they
	 * reserved, and sending them would cost Redis their arguments and the settle's scan for nothing.
	 * @param changed how many limits' costs changed, at least 1
	 */
	private Mono<Settlement> settleChanged(Reservation reservation, long[] reserved, long[] actual, int changed) {
		List<String> keys = reservation.keys();
		List<WindowPolicy> policies = reservation.policies();
		List<Long> resets = reservation.resets();
		if (changed < reserved.length) {
			List<String> someKeys = new ArrayList<>(changed);
			List<WindowPolicy> somePolicies = new ArrayList<>(changed);
			List<Long> someResets = new ArrayList<>(changed);
			long[] someReserved = new long[changed];
			long[] someActual = new long[changed];
			for (int i = 0, j = 0; i < reserved.length; i++) {
				if (actual[i] != reserved[i]) {
					someKeys.add(keys.get(i));
					somePolicies.add(policies.get(i));
					someResets.add(resets.get(i));
					someReserved[j] = reserved[i];
					someActual[j++] = actual[i];
				}
			}
			keys = someKeys;
			policies = somePolicies;
			resets = someResets;
			reserved = someReserved;
			actual = someActual;
		}
		// the costs are written into the command's arguments at once: no copy of the caller's array is needed
		return this.script.settle(keys, reservation.markers(this.clock.millis()), reservation.id(), policies, resets,
				reservation.reservedAt(), reserved, actual, REDIS_CLOCK);
	}

}
