package io.windowlimiter.core.policy;

import java.time.Duration;
import java.util.List;

import io.windowlimiter.core.failure.FailMode;
import org.jspecify.annotations.Nullable;

/**
 * Everything one route's limiter arguments say, validated.
 *
 * @param limits the route's own limits, all decided together: a request passes only if every one allows
 * it; empty when the route takes its limits from a plan
 * @param cost what one request consumes of every limit
 * @param shadow decide, count and send headers, but never block (for rolling out a new limit)
 * @param failMode what to do when Redis cannot decide
 * @param instances how many gateway instances share the limits, for fail-mode {@code local}
 * @param plan the plan for clients that have none ({@code window-rate-limiter.plan}); null when the
 * route has limits of its own
 * @param scope the scope of the route's limits that name none ({@code window-rate-limiter.scope}), also
 * of its plans' limits; null for none
 * @param quotaStatus the status of a refusal by an exhausted calendar quota ({@code quota-status}, e.g. 403);
 * 0 for the usual (429, or the adapter's own)
 * @param maxDelay how long a request the limits would take that much later is held and then passed instead
 * of refused ({@code window-rate-limiter.max-delay}); zero for none
 * @param lease the longest an instance holds a part of a hot client's quota leased from Redis
 * ({@code window-rate-limiter.lease}, see {@link LeaseArgs}); zero for no leases
 */
public record RoutePolicy(List<RouteLimit> limits, long cost, boolean shadow, FailMode failMode, int instances,
		@Nullable String plan, @Nullable String scope, int quotaStatus, Duration maxDelay, Duration lease) {

	/** The most instances a route may declare. */
	public static final int MAX_INSTANCES = 10_000;

	public RoutePolicy {
		if (limits.isEmpty() == (plan == null)) {
			throw new IllegalArgumentException("a route needs either limits of its own or a plan");
		}
		if (instances < 1 || instances > MAX_INSTANCES) {
			throw new IllegalArgumentException("instances must be from 1 to " + MAX_INSTANCES + ", was " + instances);
		}
		limits = List.copyOf(limits);
	}

	/** A route without a quota status of its own that refuses at once what its limits do not take now. */
	public RoutePolicy(List<RouteLimit> limits, long cost, boolean shadow, FailMode failMode, int instances,
			@Nullable String plan, @Nullable String scope) {
		this(limits, cost, shadow, failMode, instances, plan, scope, 0, Duration.ZERO, Duration.ZERO);
	}

	/** A route with limits of its own and no scope. */
	public RoutePolicy(List<RouteLimit> limits, long cost, boolean shadow, FailMode failMode, int instances) {
		this(limits, cost, shadow, failMode, instances, null, null);
	}

	/** The route's first limit, which most routes have alone. */
	public RouteLimit first() {
		return this.limits.get(0);
	}

	/** Whether clients' plans decide this route (it names a default plan) rather than limits of its own. */
	public boolean usesPlans() {
		return this.plan != null;
	}

	/** Whether instances lease parts of hot clients' quotas ({@code lease}) on this route. */
	public boolean leases() {
		return !this.lease.isZero();
	}

	/** Whether the route holds requests (a max-delay) rather than refuse what its limits take later. */
	public boolean holds() {
		return !this.maxDelay.isZero();
	}

}
