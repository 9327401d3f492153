package io.windowlimiter.core;

import java.util.List;

import io.windowlimiter.core.plan.Assignment;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.MaxDelay;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteLimit;

/**
 * Whether an operator's override fits every route it would apply on (the route, or every route naming the
 * scope), checked before it is stored: its limits against each route's cost, released slots, max-delay and
 * algorithms, and its token limits against the routes metering LLM calls.
 */
final class OverrideChecks {

	private final PolicyRegistry registry;

	private final Targets targets;

	OverrideChecks(PolicyRegistry registry, Targets targets) {
		this.registry = registry;
		this.targets = targets;
	}

	/** See {@link RateLimiterCore#checkOverride(String, Assignment)}. */
	void check(String target, Assignment override) {
		List<RouteLimit> limits = override.limits();
		List<String> scopeRoutes = this.targets.scopeRoutes(target);
		this.registry.checkOverrideTokens(target, (scopeRoutes != null) ? scopeRoutes : List.of(target), limits);
		for (String routeId : (scopeRoutes != null) ? scopeRoutes : List.of(target)) {
			CompiledRoute route = this.targets.route(routeId);
			if (route != null) {
				PolicyRegistry.checkOverrideCost(target, routeId, route.policy, limits);
				this.registry.checkOverrideReleased(target, routeId, limits);
				MaxDelay.checkOverride(target, routeId, route.policy, limits);
				this.registry.checkOverrideAlgorithms(target, routeId, route, limits, override.keepsAlgorithm());
			}
		}
	}

}
