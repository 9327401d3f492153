package io.windowlimiter.core.operations;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.access.Access;
import io.windowlimiter.core.access.AccessRule;
import io.windowlimiter.core.operations.RateLimitOperations.AccessView;
import io.windowlimiter.core.operations.RateLimitOperations.AssignmentView;
import io.windowlimiter.core.operations.RateLimitOperations.Change;
import io.windowlimiter.core.operations.RateLimitOperations.Reset;
import io.windowlimiter.core.plan.Assignment;
import io.windowlimiter.core.plan.PlanAssignments;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;


/**
 * What an operator changes about one client on a route or scope: its plan or override, its block or exemption,
 * and a reset of its counts. Each change is checked, written in Redis, forgotten from this instance's deny cache,
 * told to every instance through the {@link ChangeBroadcast}, and recorded ({@link ChangeAudit}).
 */
final class ClientChanges {

	/** Logged under the operations' name, where operators look for their changes. */
	private static final Log logger = LogFactory.getLog(RateLimitOperations.class);

	private final RateLimiterCore limiter;

	private final ChangeBroadcast broadcast;

	private final @Nullable PlanAssignments assignments;

	private final ChangeAudit audit;

	private final OperatorRedisBound bound;

	/**
	 * @param assignments where clients' plans and overrides are kept; null when the application has none
	 * (then nothing can be assigned)
	 */
	ClientChanges(RateLimiterCore limiter, ChangeBroadcast broadcast, @Nullable PlanAssignments assignments,
			ChangeAudit audit, OperatorRedisBound bound) {
		this.limiter = limiter;
		this.broadcast = broadcast;
		this.assignments = assignments;
		this.audit = audit;
		this.bound = bound;
	}

	/** Whether the target is a route or scope with limits here. */
	boolean isKnown(String target) {
		return this.limiter.isScope(target) || this.limiter.policyOf(target) != null;
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
	Mono<Change> change(String target, String given, AssignmentRequest request, @Nullable String principal) {
		String client = this.limiter.clientKeyOf(target, given);
		return change(target, client, "assigned", principal, assignments -> {
			if (request.clear()) {
				// clear takes back whatever operators gave the client here: plan or override, block or exemption
				return new Write(LimitChange.CLEAR,
						assignments.clear(target, client).then(Mono.defer(() -> assignments.clearAccess(target, client))));
			}
			if (request.plan() != null) {
				checkPlan(target, request.plan());
				return new Write(LimitChange.ASSIGN, assignments.assign(target, client, request.plan(), request.expires()));
			}
			checkScope(target, request.limit());
			List<Map<String, String>> limits = List.of(request.limit());
			// a limit below the cost of a request on a route of the target would refuse the client for good
			// and one of another algorithm than the limit it replaces would count from zero
			AssignmentRequest.fieldNamed(
					() -> this.limiter.checkOverride(target, PlanAssignments.overrideOf(target, limits, 0)));
			return new Write(LimitChange.OVERRIDE, assignments.override(target, client, limits, request.expires()));
		});
	}

	/**
	 * Blocks the client (403 until the block ends) or exempts it (never limited), on the route or on every
	 * route naming the scope, then tells every instance, as {@code change} does. Kept beside the client's
	 * plan or override, which it leaves as they are. Empty when the target has no limits here.
	 * @param given the client's key as the operator knows it (hashed here on a target keyed by credentials)
	 * @param principal who asked, for the log and the audit event; null when unknown
	 */
	Mono<Change> access(String target, String given, AccessRequest request, @Nullable String principal) {
		String client = this.limiter.clientKeyOf(target, given);
		boolean block = request.kind() == AccessRule.Kind.BLOCK;
		return change(target, client, "blocked or exempted", principal,
				assignments -> block ? new Write(LimitChange.BLOCK, assignments.block(target, client, request.ttl()))
						: new Write(LimitChange.EXEMPT, assignments.exempt(target, client, request.ttl())));
	}

	/**
	 * A change of the client's assignments: with none kept (no {@link PlanAssignments} bean) an error saying
	 * what cannot be done; empty when the target has no limits here; else the write {@code write} makes, then
	 * the rest of the change ({@code written}).
	 * @param cannot what cannot be done without assignments, e.g. {@code assigned}
	 */
	private Mono<Change> change(String target, String client, String cannot, @Nullable String principal,
			Function<PlanAssignments, Write> write) {
		PlanAssignments assignments = this.assignments;
		if (assignments == null) {
			return Mono.error(new IllegalStateException("No PlanAssignments bean: nothing can be " + cannot));
		}
		if (!isKnown(target)) {
			return Mono.empty();
		}
		Write made = write.apply(assignments);
		return written(assignments, made.write(), made.type(), target, client, principal);
	}

	/** A write to the client's assignments, of the change type it makes ({@link LimitChange#ASSIGN} ...). */
	private record Write(String type, Mono<Void> write) {
	}

	/**
	 * Once the change is written: the client's cached denial forgotten, every instance told, the change as it
	 * now stands answered, logged and audited.
	 */
	private Mono<Change> written(PlanAssignments assignments, Mono<Void> write, String type, String target,
			String client, @Nullable String principal) {
		LimitChange change = new LimitChange(type, target, client);
		return this.bound.bounded(write)
			.then(Mono.defer(() -> {
				this.limiter.forgetDenial(target, client);
				return publish(change);
			}))
			.map(notified -> {
				Assignment now = assignments.find(target, client);
				return new Change(type, target, client, (now != null) ? AssignmentView.of(target, now) : null,
						accessView(target, client), notified);
			})
			.doOnNext(done -> this.audit.record(done, principal));
	}

	/** The operator's block or exemption made on exactly this target, as every instance has it; null for none. */
	private @Nullable AccessView accessView(String target, String client) {
		if (this.assignments == null) {
			return null;
		}
		AccessRule rule = this.assignments.access(target, client);
		return (rule != null) ? AccessView.of(new Access(rule.kind() == AccessRule.Kind.EXEMPT, Access.RUN_TIME, target,
				rule.expiresAtMillis())) : null;
	}

	private void checkPlan(String target, String plan) {
		if (!this.limiter.plans().containsKey(plan)) {
			throw new AssignmentRequest.InvalidAssignmentException(target, "plan", "is '" + plan + "'",
					this.limiter.plans().isEmpty() ? "a plan declared under window-rate-limiter.plans, none is"
							: "one of " + String.join(", ", this.limiter.plans().keySet()));
		}
		// a plan changes nothing on a route with limits of its own: refused rather than stored to no effect
		List<String> routes = this.limiter.isScope(target) ? this.limiter.scopes().get(target) : List.of(target);
		boolean usesPlans = routes.stream().map(this.limiter::policyOf).anyMatch(route -> route != null && route.usesPlans());
		if (!usesPlans) {
			String where = this.limiter.isScope(target)
					? "scope '" + target + "', whose routes all have limits of their own"
					: "route '" + target + "', which has limits of its own";
			throw new AssignmentRequest.InvalidAssignmentException(target, "plan", "is set on " + where
					+ ", which no plan changes",
					"a plan on a route that uses plans (window-rate-limiter.plan) or on a scope one of them names, or "
							+ "limit and window (an override) here");
		}
	}

	/**
	 * An override made on a scope counts in that scope: another scope named in it would be ignored, so refused.
	 * A scope no route names would start counters of its own that nothing else shares (a typo, most likely), so
	 * refused too.
	 */
	private void checkScope(String target, @Nullable Map<String, String> limit) {
		String scope = (limit != null) ? limit.get("scope") : null;
		if (scope != null && this.limiter.isScope(target) && !scope.equals(target)) {
			throw new AssignmentRequest.InvalidAssignmentException(target, "scope", "is '" + scope
					+ "' on an override made on scope '" + target + "'", "'" + target + "' or none: an override on a "
							+ "scope replaces that scope's limits and counts in it");
		}
		if (scope != null && !this.limiter.scopes().containsKey(scope)) {
			throw new AssignmentRequest.InvalidAssignmentException(target, "scope", "is '" + scope
					+ "', which no route names", this.limiter.scopes().isEmpty() ? "none: no route names a scope"
							: "one of " + String.join(", ", this.limiter.scopes().keySet()) + ", or none");
		}
	}

	/** Tells every instance; a failure is logged and counted as nobody told, the change itself stands. */
	private Mono<Long> publish(LimitChange change) {
		return this.bound.bounded(this.broadcast.publish(change)).onErrorResume(error -> {
			logger.warn("The " + change.type() + " of client '" + LimitChange.printable(change.client()) + "' on '"
					+ change.target() + "' could not be published to other instances; they refuse it from their deny "
					+ "caches until its Retry-After ends, and see an assignment at their next poll: " + error);
			return Mono.just(0L);
		});
	}

	/**
	 * Resets the client on the route, or on the scope: deletes its counts (on a scope, those of the scope's
	 * limits), so every limit starts afresh, and has every instance forget its cached denial. Empty when the
	 * target has no limits here.
	 * @param given the client's key as the operator knows it (hashed here on a target keyed by credentials)
	 * @param principal who asked, for the log and the audit event; null when unknown
	 */
	Mono<Reset> reset(String target, String given, @Nullable String principal) {
		String client = this.limiter.clientKeyOf(target, given);
		List<String> keys = this.limiter.keysOf(target, client);
		if (keys.isEmpty()) {
			return Mono.empty();
		}
		// a reset is a fresh start: an operator's block on the target ends with it (an exemption stays)
		AccessRule rule = (this.assignments != null) ? this.assignments.access(target, client) : null;
		boolean unblock = rule != null && rule.kind() == AccessRule.Kind.BLOCK;
		Mono<Void> lift = unblock ? this.assignments.clearAccess(target, client) : Mono.empty();
		LimitChange change = unblock ? new LimitChange(LimitChange.UNBLOCK, target, client)
				: LimitChange.reset(target, client);
		return this.bound.bounded(this.limiter.resetKeys(keys))
			.flatMap(deleted -> this.bound.bounded(lift).thenReturn(deleted))
			.flatMap(deleted -> {
				this.limiter.forgetDenial(target, client);
				return publish(change).map(notified -> new Reset(target, client, deleted, unblock, notified));
			})
			.doOnNext(reset -> this.audit.record(reset, principal));
	}

}
