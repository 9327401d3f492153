package io.windowlimiter.core;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * What a request admitted with a reservation actually cost, once its response's status and headers are
 * known: the rules of {@code count-statuses} and {@code cost-from-response-header}, shared by the filters of
 * both gateways (WebFlux and Server MVC) so they settle alike. No web types: the adapter reads the status
 * and the header's value.
 */
public final class ResponseCost {

	/** What a header-name argument may be, in the messages of both gateways. */
	public static final String HEADER_ALLOWED = "the name of an HTTP header, such as X-Cost";

	private ResponseCost() {
	}

	/**
	 * The cost to settle to: 0 when the status does not count, else the upstream's figure when its header
	 * holds one (a whole number, 0 or more); an absent or unreadable value leaves the reservation as it is.
	 * @param countStatuses the statuses that count; null: every response counts
	 * @param headerValue the first value of the {@code cost-from-response-header}; null when absent or none
	 */
	public static long actual(@Nullable CountStatuses countStatuses, int status, @Nullable String headerValue,
			long reserved) {
		if (countStatuses != null && !countStatuses.counts(status)) {
			return 0;
		}
		// what the upstream says, 0 or more, digits only (18 always fit a long); anything else: as reserved
		if (headerValue != null && !headerValue.isEmpty() && headerValue.length() <= 18
				&& headerValue.chars().allMatch(c -> c >= '0' && c <= '9')) {
			return Long.parseLong(headerValue);
		}
		return reserved;
	}

	/**
	 * A header-name argument, stripped.
	 * @throws InvalidRouteConfigurationException naming the route, the property and what is allowed
	 */
	public static String headerName(String routeId, String property, String name) {
		String header = name.trim();
		if (header.isEmpty() || !header.chars().allMatch(ResponseCost::isTokenChar)) {
			throw new InvalidRouteConfigurationException(routeId, property, "is '" + header + "'", HEADER_ALLOWED);
		}
		return header;
	}

	/** RFC 9110 tchar: what a header name is made of. */
	private static boolean isTokenChar(int c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
				|| "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
	}

}
