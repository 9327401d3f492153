package io.windowlimiter.core.failure;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What a route does when Redis cannot decide (down, hanging, slow past the timeout, circuit open).
 */
public enum FailMode {

	/** Allow the request: the API stays up, limits pause. The default, as in the gateway's own limiter. */
	OPEN("open"),

	/** Deny the request with 429 and Retry-After: nothing gets through unlimited. */
	CLOSED("closed"),

	/** Enforce the route's limit divided by the number of instances, in this instance's memory. */
	LOCAL("local");

	private final String id;

	FailMode(String id) {
		this.id = id;
	}

	/** The name used in route configuration, e.g. {@code closed}. */
	public String id() {
		return this.id;
	}

	/** The configuration names of all modes, for error messages. */
	public static String ids() {
		return Arrays.stream(values()).map(FailMode::id).collect(Collectors.joining(", "));
	}

	@Override
	public String toString() {
		return this.id;
	}

}
