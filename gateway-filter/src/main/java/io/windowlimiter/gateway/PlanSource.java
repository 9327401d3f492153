package io.windowlimiter.gateway;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.windowlimiter.gateway.plan.Assignment;
import io.windowlimiter.gateway.plan.PlanAssignments;
import io.windowlimiter.gateway.plan.PlanResolver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.web.server.ServerWebExchange;

/**
 * Which compiled policy decides a client, in this order: an assignment or override made at run time
 * for the route, or for a scope the route names; else, on a route that uses plans, the plan the
 * request names ({@link PlanResolver}); else the route's default. A plan this gateway does not know
 * falls back to the default, counted ({@code gateway.ratelimit.plans.unknown}) and logged at most once
 * per interval; so does an override whose limits a request of the route's cost cannot fit (written before
 * that was checked, or by hand), which would otherwise refuse the client for good.
 */
final class PlanSource {

	private static final Log logger = LogFactory.getLog(PlanSource.class);

	private final PolicyRegistry registry;

	private final @Nullable PlanAssignments assignments;

	private final @Nullable PlanResolver resolver;

	private final RateLimitMetrics metrics;

	private final long logIntervalNanos;

	private final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE);

	private final AtomicLong lastRefusedLogged = new AtomicLong(Long.MIN_VALUE);

	PlanSource(PolicyRegistry registry, @Nullable PlanAssignments assignments, @Nullable PlanResolver resolver,
			RateLimitMetrics metrics, Duration logInterval) {
		this.registry = registry;
		this.assignments = assignments;
		this.resolver = resolver;
		this.metrics = metrics;
		this.logIntervalNanos = logInterval.toNanos();
	}

	/** The client's policy when the request need not be read; null when it must be (see {@link #fromRequest}). */
	@Nullable CompiledPolicy known(String routeId, CompiledRoute route, String clientKey) {
		Assignment assignment = assignment(routeId, route, clientKey);
		CompiledPolicy assigned = (assignment != null) ? compiled(routeId, route, assignment) : null;
		if (assigned != null) {
			return assigned;
		}
		return (route.policy.usesPlans() && this.resolver != null) ? null : route.byDefault;
	}

	/**
	 * The client's policy on a route naming the scope, as far as the scope's counters go: its assignment on
	 * the scope, else the route's default. For operators reading a scope.
	 */
	CompiledPolicy onScope(String routeId, CompiledRoute route, String scope, String clientKey) {
		Assignment assignment = (this.assignments != null) ? this.assignments.find(scope, clientKey) : null;
		CompiledPolicy assigned = (assignment != null) ? compiled(routeId, route, assignment) : null;
		return (assigned != null) ? assigned : route.byDefault;
	}

	/** The assignment's policy; null for an override the route's cost cannot fit (logged, then ignored). */
	private @Nullable CompiledPolicy compiled(String routeId, CompiledRoute route, Assignment assignment) {
		if (assignment.plan() != null) {
			return plan(routeId, route, assignment.plan());
		}
		CompiledPolicy override = this.registry.override(routeId, route, assignment.limits());
		if (override == null && mayLog(this.lastRefusedLogged)) {
			try {
				PolicyRegistry.checkOverrideCost(routeId, routeId, route.policy, assignment.limits());
			}
			catch (InvalidRouteConfigurationException ex) {
				logger.warn(ex.getMessage() + ". The override is ignored on this route: the client's plan or the "
						+ "route's default applies (at most one such line per " + Duration.ofNanos(this.logIntervalNanos)
						+ ")");
			}
		}
		return override;
	}

	/** Whether a line may be logged now: at most one per interval for each kind. */
	private boolean mayLog(AtomicLong lastLogged) {
		long now = System.nanoTime();
		long last = lastLogged.get();
		return (last == Long.MIN_VALUE || now - last >= this.logIntervalNanos) && lastLogged.compareAndSet(last, now);
	}

	/** The plan the request names, or the route's default. */
	Mono<CompiledPolicy> fromRequest(String routeId, CompiledRoute route, ContextView context) {
		ServerWebExchange exchange = ExchangeContextFilter.exchange(context);
		if (exchange == null || this.resolver == null) {
			return Mono.just(route.byDefault);
		}
		return this.resolver.resolve(exchange).map(plan -> plan(routeId, route, plan)).defaultIfEmpty(route.byDefault);
	}

	private @Nullable Assignment assignment(String routeId, CompiledRoute route, String clientKey) {
		if (this.assignments == null) {
			return null;
		}
		Assignment assignment = this.assignments.find(routeId, clientKey);
		for (int i = 0; assignment == null && i < route.scopes.size(); i++) {
			assignment = this.assignments.find(route.scopes.get(i), clientKey);
		}
		return assignment;
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
		if (mayLog(this.lastLogged)) {
			logger.warn("Unknown plan " + RateLimitHeaders.quoted(plan.substring(0, Math.min(plan.length(), 64)))
					+ " on route '" + routeId + "'; its default plan '" + route.policy.plan() + "' applies. Declared: "
					+ String.join(", ", this.registry.plans()) + " (at most one such line per "
					+ Duration.ofNanos(this.logIntervalNanos) + ")");
		}
		return route.byDefault;
	}

}
