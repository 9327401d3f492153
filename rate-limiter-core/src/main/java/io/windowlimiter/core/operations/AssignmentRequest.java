package io.windowlimiter.core.operations;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.plan.PlanAssignments;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * What an operator's POST asks for one client: a plan, one limit of its own (an override), or clearing
 * either; a plan or override optionally for a while. Boot hands an endpoint's JSON body over as flat
 * names and text values, so an override is one limit, written with the fields of a route's single limit.
 * Everything is checked here, before anything is written; a mistake names its field and what is allowed.
 *
 * @param plan the plan to put the client on; null unless it is an assignment
 * @param limit an override's limit in route-config terms ({@code limit}, {@code window}, {@code algorithm},
 * {@code burst}, {@code log-storage}, {@code name}, {@code scope}, {@code calendar}, {@code time-zone},
 * {@code week-start}, {@code block-for}, {@code unit}); null unless it is an override
 * @param expires how long the plan or override holds; null for good
 * @param clear whether the client's plan or override is taken away
 */
public record AssignmentRequest(@Nullable String plan, @Nullable Map<String, String> limit, @Nullable Duration expires,
		boolean clear) {

	/** An override's fields in the body, by the route-config property each stands for. */
	public static final Map<String, String> LIMIT_FIELDS = fields();

	private static final String ONE_OF = "either plan, or limit and window (an override, with "
			+ String.join(", ", LIMIT_FIELDS.keySet().stream().skip(2).toList())
			+ " if needed), or clear: true";

	private static Map<String, String> fields() {
		Map<String, String> fields = new LinkedHashMap<>();
		for (String property : List.of("limit", "window", "algorithm", "burst", "log-storage", "name", "scope",
				"calendar", "time-zone", "week-start", "block-for", "unit", "model")) {
			fields.put(field(property), property);
		}
		return java.util.Collections.unmodifiableMap(fields);
	}

	/**
	 * The body's fields, as Boot maps them to the operation's parameters; each may be absent.
	 * @param limitFields an override's fields, by their names in the body ({@link #LIMIT_FIELDS}); null for absent
	 */
	public static AssignmentRequest of(String target, @Nullable String plan, Map<String, @Nullable String> limitFields,
			@Nullable String expires, @Nullable String clear) {
		Map<String, String> fields = new LinkedHashMap<>();
		LIMIT_FIELDS.forEach((field, property) -> put(fields, property, limitFields.get(field)));
		if (clear != null) {
			if (!clear.equals("true")) {
				throw new InvalidAssignmentException(target, "clear", "is '" + clear + "'", "true, alone");
			}
			if (plan != null || !fields.isEmpty() || expires != null) {
				throw new InvalidAssignmentException(target, "clear", "is set beside other fields", "clear: true alone");
			}
			return new AssignmentRequest(null, null, null, true);
		}
		if (plan != null && !fields.isEmpty()) {
			throw new InvalidAssignmentException(target, "plan", "is set beside " + field(fields.keySet().iterator().next()),
					ONE_OF);
		}
		if (plan == null && fields.isEmpty()) {
			throw new InvalidAssignmentException(target, "plan", "is missing", ONE_OF);
		}
		if (plan != null && plan.isBlank()) {
			throw new InvalidAssignmentException(target, "plan", "is empty", "the name of a declared plan");
		}
		if (plan == null) {
			check(target, fields);
		}
		return new AssignmentRequest(plan, (plan == null) ? Map.copyOf(fields) : null, expiry(target, expires), false);
	}

	/**
	 * The refusal of a POST whose body Boot could not hand to the endpoint: not one JSON object, or a field whose
	 * value is a list or an object (Boot takes text, numbers and booleans only, so one limit per POST).
	 * @param field the body's field whose value is a list or an object; null when the body is no JSON object
	 */
	public static InvalidAssignmentException unreadable(String target, @Nullable String field) {
		String allowed = "one JSON object whose fields are text, numbers or true: " + ONE_OF
				+ "; one limit per POST (several limits: PlanAssignments.override in Java, or a plan)";
		return (field != null) ? new InvalidAssignmentException(target, field, "is a list or an object", allowed)
				: new InvalidAssignmentException(target, "body", "is not one JSON object", allowed);
	}

	/** An override's limit checked by the rules of a route's limits, its message naming the body's field. */
	private static void check(String target, Map<String, String> limit) {
		fieldNamed(() -> PolicyRegistry.overrideLimits(target, List.of(limit)));
	}

	/**
	 * Runs a check of an override's limit, turning its refusal into one naming the body's field.
	 * @throws InvalidAssignmentException if the check refuses the limit
	 */
	static void fieldNamed(Runnable check) {
		try {
			check.run();
		}
		catch (InvalidRouteConfigurationException ex) {
			String property = ex.getProperty();
			String field = field(property.substring(property.lastIndexOf('.') + 1));
			String message = ex.getMessage().replace(property, field);
			throw new InvalidAssignmentException(field, message, ex);
		}
	}

	private static @Nullable Duration expiry(String target, @Nullable String expires) {
		if (expires == null) {
			return null;
		}
		String allowed = "a duration of at least 1ms and at most " + PlanAssignments.MAX_TTL.toDays()
				+ "d (10 years), such as 30m, 12h or 30d (ISO-8601 such as PT12H too)";
		try {
			Duration duration = DurationStyle.detectAndParse(expires.trim());
			if (duration.toMillis() >= 1 && duration.compareTo(PlanAssignments.MAX_TTL) <= 0) {
				return duration;
			}
		}
		catch (IllegalArgumentException | DateTimeParseException | ArithmeticException ex) {
			// reported below
		}
		throw new InvalidAssignmentException(target, "expires", "is '" + expires + "'", allowed);
	}

	private static void put(Map<String, String> fields, String name, @Nullable String value) {
		if (value != null) {
			fields.put(name, value);
		}
	}

	/** The body's name of a route-config property: {@code log-storage} is {@code logStorage}, as GET shows it. */
	private static String field(String property) {
		StringBuilder field = new StringBuilder();
		for (String part : property.split("-")) {
			field.append(field.isEmpty() ? part : Character.toUpperCase(part.charAt(0)) + part.substring(1));
		}
		return field.toString();
	}

	/** A request that is wrong; its message names the field, what it was and what is allowed. */
	public static class InvalidAssignmentException extends IllegalArgumentException {

		private final String field;

		InvalidAssignmentException(String target, String field, String what, String allowed) {
			super("Invalid assignment on '" + target + "': " + field + " " + what + "; allowed: " + allowed);
			this.field = field;
		}

		InvalidAssignmentException(String field, String message, Throwable cause) {
			super(message, cause);
			this.field = field;
		}

		/** The body's field that is wrong. */
		public String getField() {
			return this.field;
		}

	}

}
