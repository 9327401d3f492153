package io.windowlimiter.core.operations;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.windowlimiter.core.operations.RateLimitOperations.AccessView;
import io.windowlimiter.core.operations.RateLimitOperations.AssignmentView;
import io.windowlimiter.core.operations.RateLimitOperations.Change;
import io.windowlimiter.core.operations.RateLimitOperations.LimitSpec;
import io.windowlimiter.core.operations.RateLimitOperations.Reset;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;

/**
 * The record of each operator's change: one log line saying who changed which client where, and how it went,
 * and, where the application keeps audit events, an {@link AuditApplicationEvent} of the change's type
 * ({@link RateLimitOperations#RESET_EVENT} ...) with its details.
 */
final class ChangeAudit {

	/** Logged under the operations' name, where operators look for their changes. */
	private static final Log logger = LogFactory.getLog(RateLimitOperations.class);

	private final @Nullable ApplicationEventPublisher auditEvents;

	/** @param auditEvents where to publish audit events, null when the application keeps none */
	ChangeAudit(@Nullable ApplicationEventPublisher auditEvents) {
		this.auditEvents = auditEvents;
	}

	/** A reset, once done and told. */
	void record(Reset reset, @Nullable String principal) {
		Map<String, Object> data = new LinkedHashMap<>();
		data.put("deletedKeys", reset.deletedKeys());
		data.put("blockLifted", reset.blockLifted());
		record(RateLimitOperations.RESET_EVENT, reset.target(), reset.client(),
				reset.blockLifted() ? "reset and unblocked" : "reset",
				"deleted " + reset.deletedKeys() + " key(s), told " + reset.instancesNotified() + " instance(s)", data,
				principal);
	}

	/** A change of a client's plan, override or access, once made and told. */
	void record(Change change, @Nullable String principal) {
		AssignmentView now = change.assignment();
		Map<String, Object> data = new LinkedHashMap<>();
		AccessView access = change.access();
		boolean accessChange = change.change().equals(LimitChange.BLOCK) || change.change().equals(LimitChange.EXEMPT);
		String what = switch (change.change()) {
			case LimitChange.ASSIGN -> "put on plan '" + ((now != null) ? now.plan() : "?") + "'";
			case LimitChange.OVERRIDE -> "overridden with " + ((now != null) ? describe(now.limits()) : "?");
			case LimitChange.BLOCK -> "blocked (403)";
			case LimitChange.EXEMPT -> "exempted from its limits";
			default -> "cleared of any plan or override, block or exemption";
		};
		if (accessChange && access != null) {
			data.put("access", access.kind());
			data.put("expires", access.expires());
			what += (access.expires() != null) ? " until " + access.expires() : " for good";
		}
		else if (now != null) {
			data.put("plan", now.plan());
			data.put("limits", (now.limits() != null) ? describe(now.limits()) : null);
			data.put("expires", now.expires());
			what += (now.expires() != null) ? " until " + now.expires() : " for good";
		}
		String event = switch (change.change()) {
			case LimitChange.ASSIGN -> RateLimitOperations.ASSIGN_EVENT;
			case LimitChange.OVERRIDE -> RateLimitOperations.OVERRIDE_EVENT;
			case LimitChange.BLOCK -> RateLimitOperations.BLOCK_EVENT;
			case LimitChange.EXEMPT -> RateLimitOperations.EXEMPT_EVENT;
			default -> RateLimitOperations.CLEAR_EVENT;
		};
		record(event, change.target(), change.client(), what, "told " + change.instancesNotified() + " instance(s)", data,
				principal);
	}

	/** Limits as one line, e.g. {@code 'tight' 2 per PT1H fixed-window}. */
	private static String describe(List<LimitSpec> limits) {
		return limits.stream()
			.map(limit -> "'" + limit.name() + "' " + limit.limit() + " per " + limit.window() + " " + limit.algorithm()
					+ ((limit.scope() != null) ? " in scope " + limit.scope() : ""))
			.collect(Collectors.joining(", "));
	}

	/** Logs the change and, where the application keeps audit events, publishes one. */
	private void record(String event, String target, String client, String what, String outcome,
			Map<String, Object> details, @Nullable String principal) {
		String who = (principal != null) ? principal : "an unauthenticated caller";
		logger.info("Rate limits of client '" + LimitChange.printable(client) + "' on '" + target + "' " + what + " by "
				+ who + ": " + outcome);
		if (this.auditEvents != null) {
			Map<String, Object> data = new LinkedHashMap<>();
			data.put("target", target);
			data.put("client", client);
			details.forEach((name, value) -> {
				if (value != null) {
					data.put(name, value);
				}
			});
			this.auditEvents.publishEvent(new AuditApplicationEvent((principal != null) ? principal : "", event, data));
		}
	}

}
