package io.windowlimiter.core;

import java.util.BitSet;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;

/**
 * The response statuses that count, from the filter's {@code count-statuses}: a comma-separated list of
 * codes ({@code 401}) and classes ({@code 4xx}). A response with any other status is refunded. Read by the
 * filters of both gateways (WebFlux and Server MVC), so it lives here, without web types.
 */
public final class CountStatuses {

	public static final String ALLOWED = "a comma-separated list of status codes from 100 to 599 and classes 1xx to 5xx, "
			+ "such as 401,403 or 4xx";

	private final BitSet statuses;

	private final String text;

	private CountStatuses(BitSet statuses, String text) {
		this.statuses = statuses;
		this.text = text;
	}

	/**
	 * @throws InvalidRouteConfigurationException naming the route, {@code count-statuses} and what is allowed
	 */
	public static CountStatuses parse(String routeId, String text) {
		return parse(routeId, "count-statuses", text);
	}

	/**
	 * @param property the argument as the route wrote it (Server MVC names its whole path)
	 * @throws InvalidRouteConfigurationException naming the route, the property and what is allowed
	 */
	public static CountStatuses parse(String routeId, String property, String text) {
		BitSet statuses = new BitSet(600);
		for (String part : text.split(",", -1)) {
			String status = part.trim();
			if (status.length() == 3 && status.charAt(0) >= '1' && status.charAt(0) <= '5'
					&& status.substring(1).equalsIgnoreCase("xx")) {
				int from = (status.charAt(0) - '0') * 100;
				statuses.set(from, from + 100);
			}
			else if (status.length() == 3 && status.chars().allMatch(Character::isDigit)
					&& Integer.parseInt(status) >= 100 && Integer.parseInt(status) <= 599) {
				statuses.set(Integer.parseInt(status));
			}
			else {
				throw new InvalidRouteConfigurationException(routeId, property,
						"is '" + text + "'" + (status.isEmpty() ? ", with an empty entry" : ", with '" + status + "'"),
						ALLOWED);
			}
		}
		return new CountStatuses(statuses, text);
	}

	/** Whether a response with this status counts. */
	public boolean counts(int status) {
		return status >= 0 && status < 600 && this.statuses.get(status);
	}

	@Override
	public String toString() {
		return this.text;
	}

}
