package io.windowlimiter.gateway;

/**
 * A route's limiter arguments are wrong. The message names the route, the property, what it was and
 * what is allowed, so that start-up output alone tells the operator what to fix.
 */
public class InvalidRouteConfigurationException extends IllegalArgumentException {

	private final String routeId;

	private final String property;

	public InvalidRouteConfigurationException(String routeId, String property, String value, String allowed) {
		super("Invalid rate limit on route '" + routeId + "': " + property + " " + value + "; allowed: " + allowed);
		this.routeId = routeId;
		this.property = property;
	}

	public String getRouteId() {
		return this.routeId;
	}

	public String getProperty() {
		return this.property;
	}

}
