package io.windowlimiter.core.operations;

import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;

import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.failure.RedisGuard;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The limiter's health as users need it, answered at once from what the limiter has seen, without a
 * call to Redis: whether Redis answers its decisions, is stalled (decisions go to the fail-mode at once,
 * bar a trial) or failed some since the previous check, and which routes then answer by which fail-mode;
 * how many decisions wait on Redis now, and how many were shed (answered by the fail-mode at once because
 * too many waited).
 *
 * <p>Always {@code UP}: while Redis fails, the fail-mode keeps the gateway serving, and every instance
 * shares the one Redis, so taking instances out of a load balancer cannot help and would turn a limiter
 * outage into an API outage. The details say {@code degraded}; alert on them, or on the
 * {@code gateway.ratelimit.decisions} metric's {@code error} and {@code fallback} outcomes.
 */
public class RateLimiterHealthIndicator implements HealthIndicator {

	private final RedisGuard guard;

	private final PolicyRegistry registry;

	/** Failed decisions counted at the previous check. */
	private final AtomicLong failuresSeen = new AtomicLong();

	public RateLimiterHealthIndicator(RedisGuard guard, PolicyRegistry registry) {
		this.guard = guard;
		this.registry = registry;
	}

	@Override
	public Health health() {
		long failures = this.guard.failures();
		long sinceLastCheck = failures - this.failuresSeen.getAndSet(failures);
		String redis = this.guard.isStalled() ? "stalled" : (sinceLastCheck > 0) ? "failing" : "answering";
		Health.Builder health = Health.up()
			.withDetail("state", "answering".equals(redis) ? "ok" : "degraded")
			.withDetail("redis", redis)
			.withDetail("failedDecisions", failures)
			.withDetail("failedSinceLastCheck", sinceLastCheck)
			.withDetail("decisionsInFlight", this.guard.inFlight())
			.withDetail("shedDecisions", this.guard.shed());
		if (!"answering".equals(redis)) {
			health.withDetail("failModes", routesByFailMode());
		}
		return health.build();
	}

	/** Route ids by the fail-mode that answers for them while Redis does not. */
	private Map<String, TreeSet<String>> routesByFailMode() {
		Map<String, TreeSet<String>> routes = new TreeMap<>();
		this.registry.policies()
			.forEach((route, policy) -> routes.computeIfAbsent(policy.failMode().id(), mode -> new TreeSet<>()).add(route));
		return routes;
	}

}
