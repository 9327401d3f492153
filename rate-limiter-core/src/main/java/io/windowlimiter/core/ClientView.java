package io.windowlimiter.core;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.windowlimiter.core.RateLimiterCore.Standing;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.RouteLimit;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * One client on a route or scope as operators see it, off the decision path: its standing on each limit that
 * decides it (read at cost 0, so reading spends nothing), every Redis key that may hold its counts, and this
 * instance's remembered denials of it, which a reset forgets.
 */
final class ClientView {

	/** Time from the Redis server's clock, for reads made by operators. */
	private static final String REDIS_CLOCK = "";

	private final Targets targets;

	private final PlanSource plans;

	private final LimitScript script;

	private final RedisGuard guard;

	private final DenyCache denyCache;

	private final ReservationsHere reservationsHere;

	private final Leases leases;

	private final Clock clock;

	ClientView(Targets targets, PlanSource plans, LimitScript script, RedisGuard guard, DenyCache denyCache,
			ReservationsHere reservationsHere, Leases leases, Clock clock) {
		this.targets = targets;
		this.plans = plans;
		this.script = script;
		this.guard = guard;
		this.denyCache = denyCache;
		this.reservationsHere = reservationsHere;
		this.leases = leases;
		this.clock = clock;
	}

	/** See {@link RateLimiterCore#reservedHere(String)}. */
	ReservationsHere.@Nullable Held reservedHere(String key) {
		return this.reservationsHere.of(key, this.clock.millis());
	}

	/**
	 * See {@link RateLimiterCore#peek}.
	 * @param clientKey the client's key as the core knows it on the target ({@link Targets#clientKeyOf})
	 */
	Mono<Standing> peek(String target, String clientKey) {
		List<String> scopeRoutes = this.targets.scopeRoutes(target);
		if (scopeRoutes != null) {
			String routeId = scopeRoutes.get(0);
			CompiledRoute route = this.targets.ownRoute(routeId);
			if (route == null) {
				return Mono.empty();
			}
			CompiledPolicy policy = this.plans.onScope(routeId, route, target, clientKey);
			List<RouteLimit> limits = policy.scopeLimits(target);
			return read(policy, limits, policy.scopeKeysFor(clientKey, target), LimitScript.arguments(
					limits.stream().map(RouteLimit::policy).toList(), 0, REDIS_CLOCK, this.clock.millis(),
					policy.route.maxDelay().toMillis()));
		}
		CompiledRoute route = this.targets.route(target);
		if (route == null) {
			return Mono.empty();
		}
		CompiledPolicy policy = this.plans.withoutRequest(target, route, clientKey);
		// a route's read shows the client's block (penalty) too
		return read(policy, policy.limits, policy.decisionKeys(policy.keysFor(clientKey), clientKey),
				policy.peekArguments(this.clock.millis()));
	}

	private Mono<Standing> read(CompiledPolicy policy, List<RouteLimit> limits, List<String> keys,
			LimitScript.Arguments arguments) {
		String plan = policy.plan.isEmpty() ? null : policy.plan;
		if (limits.isEmpty()) {
			return Mono.just(new Standing(plan, limits, List.of(), 0, List.of()));
		}
		return Mono.defer(() -> {
			// taken before the Redis read is sent: a reservation registered by then was counted in Redis before
			// the read runs there, so the remaining quota counts whatever this shows as reserved here (one made
			// after shows in neither), whichever thread handles which answer first
			List<ReservationsHere.@Nullable Held> held = new ArrayList<>(limits.size());
			for (int i = 0; i < limits.size(); i++) {
				held.add(reservedHere(keys.get(i)));
			}
			return this.guard
				.protect(this.script.nodeOf(keys), this.script.decide(keys, arguments), this.script.probe(keys))
				.map(verdict -> new Standing(plan, limits, verdict.decisions(), verdict.blockedMillis(),
						Collections.unmodifiableList(held)));
		});
	}

	/** See {@link RateLimiterCore#resetKeys}. */
	Mono<Long> resetKeys(List<String> keys) {
		// no reservation outlives the longest window there is: its settle could not refund past it anyway
		return this.script.reset(keys, WindowPolicy.MAX_WINDOW.toMillis());
	}

	/**
	 * See {@link RateLimiterCore#keysOf}.
	 * @param clientKey the client's key as the core knows it on the target ({@link Targets#clientKeyOf})
	 */
	List<String> keysOf(String target, String clientKey) {
		Set<String> keys = new LinkedHashSet<>();
		List<String> scopeRoutes = this.targets.scopeRoutes(target);
		if (scopeRoutes != null) {
			for (String routeId : scopeRoutes) {
				CompiledRoute route = this.targets.ownRoute(routeId);
				if (route != null) {
					this.plans.candidates(routeId, route, clientKey).forEach(policy -> {
						keys.addAll(policy.scopeKeysFor(clientKey, target));
						keys.addAll(policy.formerKeysFor(clientKey, target));
					});
				}
			}
			return List.copyOf(keys);
		}
		CompiledRoute route = this.targets.route(target);
		if (route != null) {
			this.plans.candidates(target, route, clientKey).forEach(policy -> {
				keys.addAll(policy.keysFor(clientKey));
				keys.addAll(policy.formerKeysFor(clientKey, null));
				if (policy.penalty) {
					// a reset lifts the client's block too
					keys.add(policy.blockKeyFor(clientKey));
				}
			});
		}
		return List.copyOf(keys);
	}

	/**
	 * See {@link RateLimiterCore#forgetDenial}.
	 * @param clientKey the client's key as the core knows it on the target ({@link Targets#clientKeyOf})
	 */
	void forgetDenial(String target, String clientKey) {
		List<String> scopeRoutes = this.targets.scopeRoutes(target);
		Set<String> routes = new LinkedHashSet<>((scopeRoutes != null) ? scopeRoutes : List.of(target));
		if (scopeRoutes == null) {
			Map<String, List<String>> scopes = this.targets.scopes();
			scopesOf(target).forEach(scope -> routes.addAll(scopes.getOrDefault(scope, List.of())));
		}
		for (String routeId : routes) {
			CompiledRoute route = this.targets.route(routeId);
			if (route != null) {
				this.plans.candidates(routeId, route, clientKey).forEach(policy -> {
					String key = DenyCache.keyOf(policy, policy.keysFor(clientKey));
					this.denyCache.forget(key);
					// a part leased before a reset would admit units the reset gave back; before a block, after it
					this.leases.forget(key);
					// a refusal of the calls of some models is remembered apart
					policy.selections()
						.forEach(models -> this.denyCache.forget(DenyCache.keyOf(models, models.keysFor(clientKey))));
				});
			}
		}
	}

	/** The scopes a route names under any plan, in order; empty for an unknown route. */
	List<String> scopesOf(String routeId) {
		CompiledRoute route = this.targets.route(routeId);
		return (route != null) ? route.scopes : List.of();
	}

}
