package io.windowlimiter.core;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;

import io.windowlimiter.core.plan.Assignment;
import io.windowlimiter.core.plan.PlanAssignments;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;

/**
 * Which compiled policy decides a client, in this order: an assignment or override made at run time
 * for the route, or for a scope the route names; else, on a route that uses plans, the plan the
 * request names (asked of the adapter); else the route's default. A plan this gateway does not know
 * falls back to the default, counted ({@code gateway.ratelimit.plans.unknown}) and logged at most once
 * per interval; so does an override whose limits a request of the route's cost cannot fit (written before
 * that was checked, or by hand), which would otherwise refuse the client for good.
 */
final class PlanSource {

	private final PolicyRegistry registry;

	private final @Nullable PlanAssignments assignments;

	/** Whether requests may name their plan (a plan resolver exists). */
	private final boolean plansFromRequests;

	private final RateLimitMetrics metrics;

	private final Duration logInterval;

	private final OccasionalLog unknownPlanLog;

	private final OccasionalLog refusedOverrideLog;

	PlanSource(PolicyRegistry registry, @Nullable PlanAssignments assignments, boolean plansFromRequests,
			RateLimitMetrics metrics, Duration logInterval) {
		this.registry = registry;
		this.assignments = assignments;
		this.plansFromRequests = plansFromRequests;
		this.metrics = metrics;
		this.logInterval = logInterval;
		this.unknownPlanLog = new OccasionalLog(PlanSource.class, logInterval);
		this.refusedOverrideLog = new OccasionalLog(PlanSource.class, logInterval);
	}

	/** The client's policy when the request need not be read; null when it must be (see {@link #fromRequest}). */
	@Nullable CompiledPolicy known(String routeId, CompiledRoute route, String clientKey) {
		Found found = assignment(routeId, route, clientKey);
		if (found != null && found.assignment().plan() != null) {
			return plan(routeId, route, found.assignment().plan());
		}
		boolean fromRequest = route.policy.usesPlans() && this.plansFromRequests;
		// an override on an LLM route keeps the limits of the client's plan it does not replace: that plan may come
		// from the request
		if (found != null && found.onRoute(routeId) && !(fromRequest && route.metersTokens)) {
			CompiledPolicy override = overridden(routeId, route, found, route.byDefault);
			if (override != null) {
				return override;
			}
			// an override the route's cost cannot fit is ignored: the plan or the default applies
			found = null;
		}
		if (fromRequest) {
			return null;
		}
		return (found != null) ? orBase(overridden(routeId, route, found, route.byDefault), route.byDefault)
				: route.byDefault;
	}

	/**
	 * The client's policy on a route naming the scope, as far as the scope's counters go: its assignment on
	 * the scope, else the route's default. For operators reading a scope.
	 */
	CompiledPolicy onScope(String routeId, CompiledRoute route, String scope, String clientKey) {
		Assignment assignment = (this.assignments != null) ? this.assignments.find(scope, clientKey) : null;
		if (assignment == null) {
			return route.byDefault;
		}
		return (assignment.plan() != null) ? plan(routeId, route, assignment.plan())
				: orBase(overridden(routeId, route, new Found(scope, assignment), route.byDefault), route.byDefault);
	}

	/**
	 * Every policy that may decide the client on the route, for operators resetting it: its assignment's,
	 * the default, each plan's, and with an override each of those under it.
	 */
	Set<CompiledPolicy> candidates(String routeId, CompiledRoute route, String clientKey) {
		Set<CompiledPolicy> bases = new LinkedHashSet<>();
		bases.add(withoutRequest(routeId, route, clientKey));
		bases.add(route.byDefault);
		for (String plan : this.registry.plans()) {
			CompiledPolicy compiled = route.plan(plan);
			if (compiled != null) {
				bases.add(compiled);
			}
		}
		Found found = assignment(routeId, route, clientKey);
		Set<CompiledPolicy> candidates = new LinkedHashSet<>(bases);
		if (found != null && found.assignment().plan() == null) {
			bases.forEach(base -> candidates.add(orBase(overridden(routeId, route, found, base), base)));
		}
		return candidates;
	}

	/** The client's policy when no request says which plan: as {@link #known}, else on the route's default. */
	CompiledPolicy withoutRequest(String routeId, CompiledRoute route, String clientKey) {
		CompiledPolicy known = known(routeId, route, clientKey);
		if (known != null) {
			return known;
		}
		Found found = assignment(routeId, route, clientKey);
		return (found != null && found.assignment().plan() == null)
				? orBase(overridden(routeId, route, found, route.byDefault), route.byDefault) : route.byDefault;
	}

	/** The line for an override that does not fit the route: {@code check}'s refusal, made on the log's thread. */
	private String refused(Runnable check) {
		String reason = "An override does not fit this route (its cost, max-delay or concurrency slots), or counts "
				+ "only tokens on a route that meters no LLM calls";
		try {
			check.run();
		}
		catch (InvalidRouteConfigurationException ex) {
			reason = ex.getMessage();
		}
		return reason + ". The override is ignored on this route: the client's plan or the route's default applies "
				+ "(at most one such line per " + this.logInterval + ")";
	}

	/**
	 * An override made on the route or on a scope it names, on top of {@code base}, the client's policy without
	 * it; null when it does not fit the route (logged at most once per interval).
	 */
	private @Nullable CompiledPolicy overridden(String routeId, CompiledRoute route, Found found, CompiledPolicy base) {
		Assignment assignment = found.assignment();
		CompiledPolicy override = found.onRoute(routeId)
				? this.registry.override(routeId, route, base, assignment.limits(), assignment.unnamed(),
						assignment.keepsAlgorithm())
				: this.registry.scopeOverride(routeId, route, base, found.target(), assignment.limits(),
						assignment.unnamed(), assignment.keepsAlgorithm());
		if (override == null && this.refusedOverrideLog.isDue()) {
			this.refusedOverrideLog.warn(() -> refused(() -> PolicyRegistry.checkOverrideCost(found.target(), routeId,
					base.route, assignment.limits())));
		}
		return override;
	}

	private static CompiledPolicy orBase(@Nullable CompiledPolicy override, CompiledPolicy base) {
		return (override != null) ? override : base;
	}

	/** The plan the request names, or the route's default, under the client's override if any. */
	Mono<CompiledPolicy> fromRequest(String routeId, CompiledRoute route, String clientKey, Mono<String> requestedPlan) {
		Found found = assignment(routeId, route, clientKey);
		Mono<CompiledPolicy> base = requestedPlan.map(plan -> plan(routeId, route, plan)).defaultIfEmpty(route.byDefault);
		// an override on a route that replaces all its limits was decided without the request (known)
		if (found == null || found.assignment().plan() != null || (found.onRoute(routeId) && !route.metersTokens)) {
			return base;
		}
		return base.map(policy -> orBase(overridden(routeId, route, found, policy), policy));
	}

	/** The client's assignment on the route, else on the first of its scopes that has one. */
	private @Nullable Found assignment(String routeId, CompiledRoute route, String clientKey) {
		if (this.assignments == null) {
			return null;
		}
		Assignment assignment = this.assignments.find(routeId, clientKey);
		if (assignment != null) {
			return new Found(routeId, assignment);
		}
		for (String scope : route.scopes) {
			assignment = this.assignments.find(scope, clientKey);
			if (assignment != null) {
				return new Found(scope, assignment);
			}
		}
		return null;
	}

	/** An assignment and the route or scope it was made on. */
	private record Found(String target, Assignment assignment) {

		boolean onRoute(String routeId) {
			return this.target.equals(routeId);
		}

	}

	private CompiledPolicy plan(String routeId, CompiledRoute route, String plan) {
		if (!route.policy.usesPlans()) {
			// a route with limits of its own has them for every plan
			return route.byDefault;
		}
		CompiledPolicy compiled = route.plan(plan);
		if (compiled != null) {
			return compiled;
		}
		this.metrics.unknownPlan(routeId);
		if (this.unknownPlanLog.isDue()) {
			this.unknownPlanLog.warn(() -> "Unknown plan "
					+ RateLimitHeaders.quoted(plan.substring(0, Math.min(plan.length(), 64))) + " on route '" + routeId
					+ "'; its default plan '" + route.policy.plan() + "' applies. Declared: "
					+ String.join(", ", this.registry.plans()) + " (at most one such line per " + this.logInterval + ")");
		}
		return route.byDefault;
	}

}
