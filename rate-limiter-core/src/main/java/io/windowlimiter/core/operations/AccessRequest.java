package io.windowlimiter.core.operations;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.function.LongSupplier;

import io.windowlimiter.core.access.AccessRule;
import io.windowlimiter.core.plan.PlanAssignments;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * What an operator's POST asks to block or exempt one client: {@code {"block": "15m"}} (or
 * {@code {"block": true, "until": "2026-12-24T00:00:00Z"}}) refuses it with 403 until then;
 * {@code {"exempt": true}} lets it through unlimited until cleared, or until {@code expires} (a duration) or
 * {@code until} (an ISO-8601 instant). A block always ends: a client refused for good belongs in a deny list.
 * Checked here before anything is written; a mistake names its field and what is allowed.
 *
 * @param kind block or exemption
 * @param ttl how long it holds; null for good (an exemption only)
 */
public record AccessRequest(AccessRule.Kind kind, @Nullable Duration ttl) {

	private static final String DURATION = "a duration of at least 1ms and at most " + PlanAssignments.MAX_TTL.toDays()
			+ "d (10 years), such as 30m, 12h or 30d (ISO-8601 such as PT12H too)";

	/** Whether the body asks for a block or an exemption rather than a plan or override. */
	public static boolean isAsked(@Nullable String block, @Nullable String exempt, @Nullable String until) {
		return block != null || exempt != null || until != null;
	}

	/**
	 * The body's fields.
	 * @param others whether the body sets any field of a plan, override or clear too
	 * @param now ms since the epoch, to turn {@code until} into a time to live
	 */
	public static AccessRequest of(String target, @Nullable String block, @Nullable String exempt,
			@Nullable String expires, @Nullable String until, boolean others, LongSupplier now) {
		String field = (block != null) ? "block" : (exempt != null) ? "exempt" : "until";
		if (block != null && exempt != null) {
			throw invalid(target, "block", "is set beside exempt", "either block or exempt");
		}
		if (others) {
			throw invalid(target, field, "is set beside plan, limit, window or clear",
					"block or exempt alone, with expires or until (clear: true alone lifts either)");
		}
		if (block == null && exempt == null) {
			throw invalid(target, "until", "is set without block or exempt", "until with block: true or exempt: true");
		}
		if (expires != null && until != null) {
			throw invalid(target, "until", "is set beside expires", "either expires (a duration) or until (an instant)");
		}
		Duration ttl = (expires != null) ? duration(target, "expires", expires)
				: (until != null) ? untilFrom(target, until, now.getAsLong()) : null;
		if (exempt != null) {
			if (!exempt.equals("true")) {
				throw invalid(target, "exempt", "is '" + exempt + "'", "true, optionally with expires or until");
			}
			return new AccessRequest(AccessRule.Kind.EXEMPT, ttl);
		}
		if (!block.equals("true")) {
			if (ttl != null) {
				throw invalid(target, "block", "is '" + block + "' beside " + ((expires != null) ? "expires" : "until"),
						"a duration alone, or true with expires or until");
			}
			ttl = duration(target, "block", block);
		}
		if (ttl == null) {
			throw invalid(target, "block", "is true without an end", "a duration such as 15m, or true with expires "
					+ "or until: a block always ends (a client refused for good belongs in window-rate-limiter.deny)");
		}
		return new AccessRequest(AccessRule.Kind.BLOCK, ttl);
	}

	private static Duration duration(String target, String field, String text) {
		try {
			Duration duration = DurationStyle.detectAndParse(text.trim());
			if (duration.toMillis() >= 1 && duration.compareTo(PlanAssignments.MAX_TTL) <= 0) {
				return duration;
			}
		}
		catch (IllegalArgumentException | DateTimeParseException | ArithmeticException ex) {
			// reported below
		}
		throw invalid(target, field, "is '" + text + "'", DURATION);
	}

	private static Duration untilFrom(String target, String text, long nowMillis) {
		String allowed = "an ISO-8601 instant in the future, at most 10 years ahead, such as 2026-12-24T00:00:00Z";
		try {
			Duration ttl = Duration.ofMillis(Instant.parse(text.trim()).toEpochMilli() - nowMillis);
			if (ttl.toMillis() >= 1 && ttl.compareTo(PlanAssignments.MAX_TTL) <= 0) {
				return ttl;
			}
		}
		catch (DateTimeParseException | ArithmeticException ex) {
			// reported below
		}
		throw invalid(target, "until", "is '" + text + "'", allowed);
	}

	private static AssignmentRequest.InvalidAssignmentException invalid(String target, String field, String what,
			String allowed) {
		return new AssignmentRequest.InvalidAssignmentException(target, field, what, allowed);
	}

}
