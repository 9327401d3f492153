package io.windowlimiter.core.operations;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The fields a POST to the {@code ratelimits} endpoint may have, each once. Boot hands the endpoint only the
 * fields it has parameters for and keeps the last of a duplicated one, so an unknown field ({@code block-for},
 * {@code bogus}) was dropped without a word and {@code "unit":"tokens","unit":"requests"} set requests: the
 * operator's change did something else than meant. Each server's adapter reads the body's top-level field names,
 * in order, before Boot does, and refuses the body with what this answers, so nothing of it is applied.
 */
public final class RateLimitsBodyFields {

	/** Every field of a POST, in the order the docs list them. */
	public static final List<String> FIELDS = fields();

	private RateLimitsBodyFields() {
	}

	private static List<String> fields() {
		List<String> fields = new ArrayList<>(List.of("plan"));
		fields.addAll(AssignmentRequest.LIMIT_FIELDS.keySet());
		fields.addAll(List.of("expires", "clear", "block", "exempt", "until"));
		return List.copyOf(fields);
	}

	/**
	 * The refusal of a body with these top-level field names, or null when each is a field of the endpoint and
	 * given once.
	 * @param target the route or scope, named in the message
	 * @param names the body's top-level field names as written, in order, duplicates kept
	 */
	public static AssignmentRequest.@Nullable InvalidAssignmentException refusal(String target, List<String> names) {
		Set<String> seen = new HashSet<>();
		for (String name : names) {
			if (!FIELDS.contains(name)) {
				String camel = camelCase(name);
				return FIELDS.contains(camel)
						? new AssignmentRequest.InvalidAssignmentException(target, name, "is not a field of this endpoint",
								camel + " (the endpoint's fields are camelCase, as GET shows them)")
						: new AssignmentRequest.InvalidAssignmentException(target, name, "is not a field of this endpoint",
								"one of " + String.join(", ", FIELDS));
			}
			if (!seen.add(name)) {
				return new AssignmentRequest.InvalidAssignmentException(target, name, "is given more than once",
						"each field once (JSON parsers disagree on which of two wins)");
			}
		}
		return null;
	}

	/** {@code block-for} as {@code blockFor}, {@code time_zone} as {@code timeZone}. */
	private static String camelCase(String name) {
		StringBuilder camel = new StringBuilder();
		boolean upper = false;
		for (char c : name.toCharArray()) {
			if (c == '-' || c == '_') {
				upper = !camel.isEmpty();
			}
			else {
				camel.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return camel.toString();
	}

}
