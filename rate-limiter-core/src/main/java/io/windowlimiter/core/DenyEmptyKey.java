package io.windowlimiter.core;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * A filter's {@code deny-empty-key}: whether a request its key resolver gives no key is refused (with
 * {@code empty-key-status}) or counted with the route's other keyless requests under
 * {@link io.windowlimiter.core.key.RedisKeys#EMPTY_KEY}. Read by the filters of both gateways, so a bad value
 * is named alike on both.
 */
public final class DenyEmptyKey {

	public static final String ALLOWED = "true or false";

	private DenyEmptyKey() {
	}

	/**
	 * @param property the argument as the route wrote it (Server MVC names its whole path)
	 * @param text the argument's value; null when not given, which denies
	 * @throws InvalidRouteConfigurationException naming the route, the property and what is allowed
	 */
	public static boolean parse(String routeId, String property, @Nullable String text) {
		if (text == null) {
			return true;
		}
		if (!text.equals("true") && !text.equals("false")) {
			throw new InvalidRouteConfigurationException(routeId, property, "is '" + text + "'", ALLOWED);
		}
		return Boolean.parseBoolean(text);
	}

}
