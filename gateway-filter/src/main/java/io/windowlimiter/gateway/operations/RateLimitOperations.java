package io.windowlimiter.gateway.operations;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.RateLimitHeaders;
import io.windowlimiter.gateway.RouteLimit;
import io.windowlimiter.gateway.RoutePolicy;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.algorithm.Decision;
import io.windowlimiter.gateway.algorithm.WindowPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * What an operator can see and do: the routes and their limits, a client's standing on a route (read at
 * cost 0, spending nothing), the clients refused most, and resetting a client. A reset deletes the
 * client's keys, then tells every instance through the {@link ChangeBroadcast}; it is logged, and
 * published as an {@link AuditApplicationEvent} when the application keeps audit events.
 */
public class RateLimitOperations {

	/** The audit event type of a reset. */
	public static final String RESET_EVENT = "RATE_LIMIT_RESET";

	/** How many of the clients refused most a route's description lists. */
	static final int TOP_DENIED = 10;

	/** An operator's call waits this long for Redis at most, then fails instead of hanging. */
	private static final Duration REDIS_TIMEOUT = Duration.ofSeconds(5);

	private static final Log logger = LogFactory.getLog(RateLimitOperations.class);

	private final WindowRateLimiter limiter;

	private final ReactiveStringRedisTemplate redis;

	private final ChangeBroadcast broadcast;

	private final DeniedClients deniedClients;

	private final @Nullable ApplicationEventPublisher auditEvents;

	/**
	 * @param auditEvents where to publish audit events, null when the application keeps none (no
	 * {@code AuditEventRepository})
	 */
	public RateLimitOperations(WindowRateLimiter limiter, ReactiveStringRedisTemplate redis, ChangeBroadcast broadcast,
			DeniedClients deniedClients, @Nullable ApplicationEventPublisher auditEvents) {
		this.limiter = limiter;
		this.redis = redis;
		this.broadcast = broadcast;
		this.deniedClients = deniedClients;
		this.auditEvents = auditEvents;
	}

	/** Every route with limits of this limiter, by id. */
	public Map<String, RouteLimits> routes() {
		Map<String, RouteLimits> routes = new LinkedHashMap<>();
		this.limiter.policies().forEach((routeId, policy) -> routes.put(routeId, RouteLimits.of(policy)));
		return routes;
	}

	/** The route's limits and the clients refused most on it lately; null when it has no limits here. */
	public @Nullable RouteDetails route(String target) {
		RoutePolicy policy = this.limiter.policyOf(target);
		if (policy == null) {
			return null;
		}
		RouteLimits limits = RouteLimits.of(policy);
		return new RouteDetails(target, limits.limits(), limits.cost(), limits.shadow(), limits.failMode(),
				limits.plan(), new TopDenied(this.deniedClients.window().toString(), this.deniedClients.top(target, TOP_DENIED)));
	}

	/**
	 * The client's standing on each limit that decides it on the route now (see
	 * {@link WindowRateLimiter#peek}); empty when the route has no limits here.
	 */
	public Mono<ClientStanding> standing(String target, String client) {
		return this.limiter.peek(target, client).timeout(REDIS_TIMEOUT).map(standing -> {
			List<LimitStanding> limits = new ArrayList<>();
			for (int i = 0; i < standing.limits().size(); i++) {
				RouteLimit limit = standing.limits().get(i);
				Decision decision = standing.decisions().get(i);
				limits.add(new LimitStanding(limit.name(), limit.scope(), limit.policy().limit(),
						limit.policy().window().toString(), decision.remaining(), RateLimitHeaders.ceilSeconds(decision.resetMillis())));
			}
			return new ClientStanding(target, client, standing.plan(), limits);
		});
	}

	/**
	 * Resets the client on the route: deletes its counts, so every limit starts afresh, and has every
	 * instance forget its cached denial. Empty when the route has no limits here.
	 * @param principal who asked, for the log and the audit event; null when unknown
	 */
	public Mono<Reset> reset(String target, String client, @Nullable String principal) {
		List<String> keys = this.limiter.keysOf(target, client);
		if (keys.isEmpty()) {
			return Mono.empty();
		}
		LimitChange change = LimitChange.reset(target, client);
		return this.redis.delete(keys.toArray(String[]::new)).timeout(REDIS_TIMEOUT).flatMap(deleted -> {
			this.limiter.forgetDenial(target, client);
			return this.broadcast.publish(change)
				.timeout(REDIS_TIMEOUT)
				.onErrorResume(error -> {
					logger.warn("Reset of client '" + LimitChange.printable(client) + "' on '" + target + "' could not be published to"
							+ " other instances; they refuse it from their deny caches until its Retry-After ends: "
							+ error);
					return Mono.just(0L);
				})
				.map(notified -> new Reset(target, client, deleted, notified));
		}).doOnNext(reset -> record(reset, principal));
	}

	private void record(Reset reset, @Nullable String principal) {
		String who = (principal != null) ? principal : "an unauthenticated caller";
		logger.info("Rate limits of client '" + LimitChange.printable(reset.client()) + "' on '" + reset.target()
				+ "' reset by " + who + ": deleted " + reset.deletedKeys() + " key(s), told " + reset.instancesNotified()
				+ " instance(s)");
		if (this.auditEvents != null) {
			Map<String, Object> data = new LinkedHashMap<>();
			data.put("target", reset.target());
			data.put("client", reset.client());
			data.put("deletedKeys", reset.deletedKeys());
			this.auditEvents.publishEvent(new AuditApplicationEvent((principal != null) ? principal : "", RESET_EVENT, data));
		}
	}

	/**
	 * A route's limits.
	 * @param limits each limit, in the route's order
	 * @param cost what one request consumes of every limit
	 * @param shadow whether the route only counts, never refuses
	 * @param failMode what the route does when Redis cannot decide
	 * @param plan the plan of clients without one, when the route's limits come from plans; else null
	 */
	public record RouteLimits(List<LimitSpec> limits, long cost, boolean shadow, String failMode,
			@Nullable String plan) {

		static RouteLimits of(RoutePolicy policy) {
			return new RouteLimits(policy.limits().stream().map(LimitSpec::of).toList(), policy.cost(), policy.shadow(),
					policy.failMode().id(), policy.plan());
		}

	}

	/**
	 * One limit as configured.
	 * @param name the policy name clients see in {@code RateLimit-Policy}
	 * @param algorithm e.g. {@code sliding-log}
	 * @param logStorage for the sliding log, {@code ring} or {@code sorted-set}; else null
	 * @param limit requests per window
	 * @param window ISO-8601, e.g. {@code PT1M}
	 * @param burst for the token bucket, requests allowed at once; else the limit
	 * @param scope the scope whose counters the limit shares with other routes; null for none
	 */
	public record LimitSpec(String name, String algorithm, @Nullable String logStorage, long limit, String window,
			long burst, @Nullable String scope) {

		static LimitSpec of(RouteLimit limit) {
			WindowPolicy policy = limit.policy();
			return new LimitSpec(limit.name(), policy.algorithm().id(), policy.algorithm().storage(), policy.limit(),
					policy.window().toString(), policy.burst(), limit.scope());
		}

	}

	/**
	 * A route's limits (as in {@link RouteLimits}) with the clients refused most on it, on this instance.
	 * @param target the route id
	 * @param limits each limit, in the route's order
	 * @param cost what one request consumes of every limit
	 * @param shadow whether the route only counts, never refuses
	 * @param failMode what the route does when Redis cannot decide
	 * @param plan the plan of clients without one, when the route's limits come from plans; else null
	 * @param topDenied the clients refused most lately
	 */
	public record RouteDetails(String target, List<LimitSpec> limits, long cost, boolean shadow, String failMode,
			@Nullable String plan, TopDenied topDenied) {
	}

	/**
	 * The clients refused most within a recent window, on this instance (estimates, see {@link DeniedClients}).
	 * @param window how far back, ISO-8601
	 * @param clients most refused first
	 */
	public record TopDenied(String window, List<DeniedClients.DeniedClient> clients) {
	}

	/**
	 * A client's standing on every limit of a route.
	 * @param target the route id
	 * @param client the client's key
	 * @param plan the plan whose limits decide the client (its assignment, else the route's default); null
	 * for the route's own limits
	 * @param limits one per limit, in order
	 */
	public record ClientStanding(String target, String client, @Nullable String plan, List<LimitStanding> limits) {
	}

	/**
	 * A client's standing on one limit now.
	 * @param name the limit's policy name
	 * @param scope the scope whose counters the limit shares with other routes; null for none
	 * @param limit requests per window
	 * @param window ISO-8601, e.g. {@code PT1M}
	 * @param remaining requests the client may still make now
	 * @param reset seconds until quota frees, rounded up, as in {@code X-RateLimit-Reset}
	 */
	public record LimitStanding(String name, @Nullable String scope, long limit, String window, long remaining,
			long reset) {
	}

	/**
	 * A reset done.
	 * @param target the route id
	 * @param client the client's key
	 * @param deletedKeys how many keys held counts
	 * @param instancesNotified how many instances (this one included) heard of it; on a Redis Cluster only
	 * those listening on the node that took the message
	 */
	public record Reset(String target, String client, long deletedKeys, long instancesNotified) {
	}

}
