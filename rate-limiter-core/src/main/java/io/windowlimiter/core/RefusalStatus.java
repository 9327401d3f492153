package io.windowlimiter.core;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * A status a filter refuses with, from its {@code status-code} (a refusal by its limits) or
 * {@code empty-key-status} (a request without a key). Read by the filters of both gateways (WebFlux and
 * Server MVC), so it lives here, without web types; the core's own statuses (403 for a deny list or an
 * operator's block, a calendar quota's {@code quota-status}) go before it, in {@link Admission#status()}.
 */
public final class RefusalStatus {

	public static final String ALLOWED = "an HTTP status code from 400 to 599";

	private RefusalStatus() {
	}

	/**
	 * @param property the argument as the route wrote it (Server MVC names its whole path)
	 * @param text the argument's value; null when not given
	 * @param fallback the status when not given
	 * @throws InvalidRouteConfigurationException naming the route, the property and what is allowed
	 */
	public static int parse(String routeId, String property, @Nullable String text, int fallback) {
		if (text == null) {
			return fallback;
		}
		String status = text.trim();
		if (status.length() == 3 && status.chars().allMatch(c -> c >= '0' && c <= '9')) {
			int code = Integer.parseInt(status);
			if (code >= 400 && code <= 599) {
				return code;
			}
		}
		throw new InvalidRouteConfigurationException(routeId, property, "is '" + status + "'", ALLOWED);
	}

}
