package io.windowlimiter.core.operations;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.core.policy.RoutePolicy;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.ReservationsHere;
import io.windowlimiter.core.access.Access;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.plan.Assignment;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.metering.LlmPrices;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * What an operator can see and do: the routes, scopes and plans, a client's standing on a route or scope
 * (read at cost 0, spending nothing) with its assignment, the clients refused most, resetting a client,
 * and putting a client on a plan, giving it limits of its own or clearing either ({@link PlanAssignments}),
 * blocking or exempting it.
 * Each change is made in Redis, then told to every instance through the {@link ChangeBroadcast}; it is
 * logged, and published as an {@link AuditApplicationEvent} when the application keeps audit events.
 *
 * <p>This class reads (routes, scopes, plans, a client's standing) and answers in the records below, the
 * endpoint's JSON; the changes are made by {@code ClientChanges} and recorded by {@code ChangeAudit}.
 */
public class RateLimitOperations {

	/** The audit event type of a reset. */
	public static final String RESET_EVENT = "RATE_LIMIT_RESET";

	/** The audit event type of putting a client on a plan. */
	public static final String ASSIGN_EVENT = "RATE_LIMIT_ASSIGNED";

	/** The audit event type of giving a client limits of its own. */
	public static final String OVERRIDE_EVENT = "RATE_LIMIT_OVERRIDDEN";

	/** The audit event type of taking a client's plan or override away. */
	public static final String CLEAR_EVENT = "RATE_LIMIT_CLEARED";

	/** The audit event type of blocking a client (403 until the block ends). */
	public static final String BLOCK_EVENT = "RATE_LIMIT_BLOCKED";

	/** The audit event type of exempting a client from its limits. */
	public static final String EXEMPT_EVENT = "RATE_LIMIT_EXEMPTED";

	/** How many of the clients refused most a route's description lists. */
	static final int TOP_DENIED = 10;

	private final RateLimiterCore limiter;

	private final DeniedClients deniedClients;

	private final @Nullable PlanAssignments assignments;

	private final OperatorRedisBound bound;

	private final ClientChanges changes;

	/**
	 * @param assignments where clients' plans and overrides are kept; null when the application has none
	 * (then nothing can be assigned)
	 * @param auditEvents where to publish audit events, null when the application keeps none (no
	 * {@code AuditEventRepository})
	 * @param redisTimeout how long each Redis call waits at most ({@code window-rate-limiter.redis-timeout}, the
	 * decisions' bound): past it the call fails with a {@link TimeoutException}, which the endpoint answers 503
	 */
	public RateLimitOperations(RateLimiterCore limiter, ReactiveStringRedisTemplate redis, ChangeBroadcast broadcast,
			DeniedClients deniedClients, @Nullable PlanAssignments assignments,
			@Nullable ApplicationEventPublisher auditEvents, Duration redisTimeout) {
		this.limiter = limiter;
		this.deniedClients = deniedClients;
		this.assignments = assignments;
		this.bound = new OperatorRedisBound(redisTimeout);
		this.changes = new ClientChanges(limiter, broadcast, assignments, new ChangeAudit(auditEvents),
				this.bound);
	}

	/** Every route with limits of this limiter, by id. */
	public Map<String, RouteLimits> routes() {
		Map<String, RouteLimits> routes = new LinkedHashMap<>();
		this.limiter.policies().forEach((routeId, policy) -> routes.put(routeId, RouteLimits.of(policy)));
		return routes;
	}

	/** Every scope some route names, with the routes naming it, by name. */
	public Map<String, ScopeDetails> scopes() {
		Map<String, ScopeDetails> scopes = new LinkedHashMap<>();
		this.limiter.scopes().forEach((scope, routes) -> scopes.put(scope, new ScopeDetails(scope, routes)));
		return scopes;
	}

	/** Every declared plan with its limits, by name. */
	public Map<String, PlanLimits> plans() {
		Map<String, PlanLimits> plans = new LinkedHashMap<>();
		this.limiter.plans()
			.forEach((plan, limits) -> plans.put(plan, new PlanLimits(limits.stream().map(LimitSpec::of).toList())));
		return plans;
	}

	/** Whether the target is a route or scope with limits here. */
	public boolean isKnown(String target) {
		return this.changes.isKnown(target);
	}

	/** The scope and the routes naming it; null when the target is not a scope. */
	public @Nullable ScopeDetails scope(String target) {
		return this.limiter.isScope(target) ? scopes().get(target) : null;
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
	 * The client's standing on each limit that decides it on the route or scope now (see
	 * {@link RateLimiterCore#peek}), with its assignment; empty when the target has no limits here.
	 * @param given the client's key as the operator knows it; on a target keyed by credentials the answer
	 * names the client by its hash ({@link RateLimiterCore#clientKeyOf}), as everything else does
	 */
	public Mono<ClientStanding> standing(String target, String given) {
		String client = this.limiter.clientKeyOf(target, given);
		return this.bound.bounded(this.limiter.peek(target, client)).map(standing -> {
			List<LimitStanding> limits = new ArrayList<>();
			for (int i = 0; i < standing.limits().size(); i++) {
				RouteLimit limit = standing.limits().get(i);
				Decision decision = standing.decisions().get(i);
				// a concurrency limit's read counts the slots held: what is in flight, read with the rest
				Long inFlight = limit.policy().algorithm().countsRequests()
						? limit.policy().limit() - decision.remaining() : null;
				ReservationsHere.Held held = standing.reservedHere().get(i);
				limits.add(new LimitStanding(limit.name(), limit.scope(), amount(limit, limit.policy().limit()),
						limit.policy().window().toString(), amount(limit, decision.remaining()),
						RateLimitHeaders.ceilSeconds(decision.resetMillis()), inFlight,
						(held != null) ? new ReservedHere(held.calls(), amount(limit, held.reserved())) : null, unit(limit),
						limit.model()));
			}
			Access access = this.limiter.accessOf(target, given);
			return new ClientStanding(target, client, standing.plan(), assignmentOf(target, client),
					(access != null) ? AccessView.of(access) : null, limits,
					RateLimitHeaders.ceilSeconds(standing.blockedMillis()));
		});
	}

	/** The assignment that decides the client on the target: its own, else on a route one of its scopes'. */
	private @Nullable AssignmentView assignmentOf(String target, String client) {
		if (this.assignments == null) {
			return null;
		}
		List<String> targets = new ArrayList<>();
		targets.add(target);
		if (!this.limiter.isScope(target)) {
			targets.addAll(this.limiter.scopesOf(target));
		}
		for (String candidate : targets) {
			Assignment assignment = this.assignments.find(candidate, client);
			if (assignment != null) {
				return AssignmentView.of(candidate, assignment);
			}
		}
		return null;
	}

	/**
	 * Puts the client on a plan, gives it a limit of its own, or clears either, on the route or on every
	 * route naming the scope, then tells every instance: each has the change within a Redis round trip
	 * (and, should the message be lost, within its assignments' refresh interval). Empty when the target
	 * has no limits here.
	 * @param given the client's key as the operator knows it (hashed here on a target keyed by credentials)
	 * @param principal who asked, for the log and the audit event; null when unknown
	 * @throws AssignmentRequest.InvalidAssignmentException if the plan is not declared, or plans do not
	 * apply on the route, or an override's limit is below the cost of a request on a route it applies on
	 */
	public Mono<Change> change(String target, String given, AssignmentRequest request, @Nullable String principal) {
		return this.changes.change(target, given, request, principal);
	}

	/**
	 * Blocks the client (403 until the block ends) or exempts it (never limited), on the route or on every
	 * route naming the scope, then tells every instance, as {@link #change} does. Kept beside the client's
	 * plan or override, which it leaves as they are. Empty when the target has no limits here.
	 * @param given the client's key as the operator knows it (hashed here on a target keyed by credentials)
	 * @param principal who asked, for the log and the audit event; null when unknown
	 */
	public Mono<Change> access(String target, String given, AccessRequest request, @Nullable String principal) {
		return this.changes.access(target, given, request, principal);
	}

	/**
	 * Resets the client on the route, or on the scope: deletes its counts (on a scope, those of the scope's
	 * limits), so every limit starts afresh, and has every instance forget its cached denial. Empty when the
	 * target has no limits here.
	 * @param given the client's key as the operator knows it (hashed here on a target keyed by credentials)
	 * @param principal who asked, for the log and the audit event; null when unknown
	 */
	public Mono<Reset> reset(String target, String given, @Nullable String principal) {
		return this.changes.reset(target, given, principal);
	}

	/**
	 * A route's limits.
	 * @param limits each limit, in the route's order
	 * @param cost what one request consumes of every limit
	 * @param shadow whether the route only counts, never refuses
	 * @param failMode what the route does when Redis cannot decide
	 * @param plan the plan of clients without one, when the route's limits come from plans; else null
	 * @param maxDelay how long the route holds a request rather than refuse it, ISO-8601 (e.g. {@code PT2S});
	 * null when it refuses at once
	 */
	public record RouteLimits(List<LimitSpec> limits, long cost, boolean shadow, String failMode,
			@Nullable String plan, @Nullable String maxDelay) {

		static RouteLimits of(RoutePolicy policy) {
			return new RouteLimits(policy.limits().stream().map(LimitSpec::of).toList(), policy.cost(), policy.shadow(),
					policy.failMode().id(), policy.plan(), policy.holds() ? policy.maxDelay().toString() : null);
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
	 * @param calendar for a calendar quota its period, e.g. {@code month in Europe/Berlin}; else null
	 * @param blockFor the penalty, ISO-8601; null for none
	 * @param unit what it counts: {@code tokens} or {@code usd} (of LLM calls) or {@code requests}; the figures of a
	 * {@code usd} limit are US dollars
	 * @param model the models whose calls it counts (a name or a pattern with {@code *}); null for every call
	 */
	public record LimitSpec(String name, String algorithm, @Nullable String logStorage, Number limit, String window,
			Number burst, @Nullable String scope, @Nullable String calendar, @Nullable String blockFor, String unit,
			@Nullable String model) {

		static LimitSpec of(RouteLimit limit) {
			WindowPolicy policy = limit.policy();
			return new LimitSpec(limit.name(), policy.algorithm().id(), policy.algorithm().storage(),
					amount(limit, policy.limit()), policy.window().toString(), amount(limit, policy.burst()), limit.scope(),
					(policy.calendar() != null) ? policy.calendar().toString() : null,
					limit.blockFor().isZero() ? null : limit.blockFor().toString(), RateLimitOperations.unit(limit),
					limit.model());
		}

	}

	/**
	 * A limit's figure as an operator writes it: a money limit's in US dollars ({@code 4.985}), as an override
	 * takes it, though it is counted in micro-dollars; any other's as counted.
	 */
	static Number amount(RouteLimit limit, long counted) {
		return limit.countsMoney() ? new BigDecimal(LlmPrices.dollars(counted)) : Long.valueOf(counted);
	}

	/** What a limit counts, as a route's {@code unit} names it. */
	static String unit(RouteLimit limit) {
		return limit.unit().id();
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
	 * A client's standing on every limit of a route, or of a scope.
	 * @param target the route id or scope name
	 * @param client the client's key
	 * @param plan the plan whose limits decide the client (its assignment, else the route's default);
	 * {@code override} for an override's; null for the route's own limits
	 * @param assignment the client's plan or override that decides it here; null for none
	 * @param access why the client is exempt or refused here whatever its quota (a list, or an operator's block
	 * or exemption); null when its limits decide
	 * @param limits one per limit, in order
	 * @param blockedFor seconds the client's penalty ({@code block-for}) still refuses it on the route, rounded
	 * up; 0 when it is not blocked (a DELETE lifts a block)
	 */
	public record ClientStanding(String target, String client, @Nullable String plan,
			@Nullable AssignmentView assignment, @Nullable AccessView access, List<LimitStanding> limits,
			long blockedFor) {
	}

	/**
	 * Why a client is exempt or refused whatever its quota.
	 * @param kind {@code exempt} (never limited), {@code block} (an operator's, 403 until it ends) or
	 * {@code deny} (a deny list's, 403)
	 * @param source {@code run-time}, {@code route list} or {@code gateway list}
	 * @param target for a run-time rule, the route or scope it was made on; else null
	 * @param expires for a run-time rule, when it ends, ISO-8601 in UTC; null for never (or a list)
	 */
	public record AccessView(String kind, String source, @Nullable String target, @Nullable String expires) {

		static AccessView of(Access access) {
			String expires = (access.expiresAtMillis() != 0) ? Instant.ofEpochMilli(access.expiresAtMillis()).toString()
					: null;
			return new AccessView(access.kind(), access.source(), access.target(), expires);
		}

	}

	/**
	 * A client's plan or override as an operator made it.
	 * @param target the route id or scope name it was made on
	 * @param plan the plan; null for an override
	 * @param limits the override's limits; null for a plan
	 * @param expires when it ends, ISO-8601 in UTC; null for never
	 */
	public record AssignmentView(String target, @Nullable String plan, @Nullable List<LimitSpec> limits,
			@Nullable String expires) {

		static AssignmentView of(String target, Assignment assignment) {
			List<LimitSpec> limits = (assignment.plan() != null) ? null
					: assignment.limits().stream().map(LimitSpec::of).toList();
			String expires = (assignment.expiresAtMillis() != 0)
					? Instant.ofEpochMilli(assignment.expiresAtMillis()).toString() : null;
			return new AssignmentView(target, assignment.plan(), limits, expires);
		}

	}

	/**
	 * A change to a client's assignment, made.
	 * @param change {@code assign}, {@code override} or {@code clear}
	 * @param target the route id or scope name
	 * @param client the client's key
	 * @param assignment what the client has on the target now; null after a clear
	 * @param access the block or exemption the client has on the target now; null for none
	 * @param instancesNotified how many instances (this one included) heard of it at once; on a Redis Cluster
	 * only those listening on the node that took the message
	 */
	public record Change(String change, String target, String client, @Nullable AssignmentView assignment,
			@Nullable AccessView access, long instancesNotified) {
	}

	/**
	 * A scope: counters that every route naming it shares.
	 * @param target the scope's name
	 * @param routes the routes naming it
	 */
	public record ScopeDetails(String target, List<String> routes) {
	}

	/**
	 * A declared plan.
	 * @param limits its limits, in order
	 */
	public record PlanLimits(List<LimitSpec> limits) {
	}

	/**
	 * A client's standing on one limit now.
	 * @param name the limit's policy name
	 * @param scope the scope whose counters the limit shares with other routes; null for none
	 * @param limit requests per window
	 * @param window ISO-8601, e.g. {@code PT1M}
	 * @param remaining requests the client may still make now
	 * @param reset seconds until quota frees, rounded up, as in {@code X-RateLimit-Reset} (for a concurrency
	 * limit: until the oldest slot held expires at the latest)
	 * @param inFlight for a concurrency limit, the client's requests in flight now (slots held); null for the others
	 * @param reservedHere the client's LLM calls admitted by this instance and not settled yet, with what they
	 * reserved of this limit; null when none (calls running on other instances are not in it)
	 * @param unit what the limit counts: {@code tokens} or {@code usd} (of LLM calls) or {@code requests}; the
	 * figures of a {@code usd} limit are US dollars
	 * @param model the models whose calls the limit counts (a name or a pattern with {@code *}); null for every call
	 */
	public record LimitStanding(String name, @Nullable String scope, Number limit, String window, Number remaining,
			long reset, @Nullable Long inFlight, @Nullable ReservedHere reservedHere, String unit,
			@Nullable String model) {
	}

	/**
	 * What the client's calls still running on this instance reserved of one limit, as estimates not yet
	 * settled to the usage their responses report: {@code limit - remaining - reserved} is what the client's
	 * settled calls used, when no call of it runs on another instance.
	 * @param calls the calls admitted here and not settled yet
	 * @param reserved what they reserved of the limit: their token estimates on a token limit, their cost on
	 * a request limit
	 */
	public record ReservedHere(long calls, Number reserved) {
	}

	/**
	 * A reset done.
	 * @param target the route id or scope name
	 * @param client the client's key
	 * @param deletedKeys how many keys held counts
	 * @param blockLifted whether an operator's block on the target was lifted with it
	 * @param instancesNotified how many instances (this one included) heard of it; on a Redis Cluster only
	 * those listening on the node that took the message
	 */
	public record Reset(String target, String client, long deletedKeys, boolean blockLifted, long instancesNotified) {
	}

}
