package io.windowlimiter.core.policy;

/**
 * A route's limiter arguments, a plan or an override are wrong. The message names the route (or plan,
 * or override target), the property, what it was and what is allowed, so that start-up output alone
 * tells the operator what to fix.
 */
public class InvalidRouteConfigurationException extends IllegalArgumentException {

	private final String kind;

	private final String routeId;

	private final String found;

	private final String allowed;

	private final String property;

	private final boolean unknownName;

	public InvalidRouteConfigurationException(String routeId, String property, String value, String allowed) {
		this("route", routeId, property, value, allowed);
	}

	/**
	 * @param kind what is wrong: {@code route}, {@code plan} or {@code override for}
	 * @param owner its name
	 */
	public InvalidRouteConfigurationException(String kind, String owner, String property, String value,
			String allowed) {
		this(kind, owner, property, value, allowed, false);
	}

	private InvalidRouteConfigurationException(String kind, String owner, String property, String value,
			String allowed, boolean unknownName) {
		super("Invalid rate limit on " + kind + " '" + owner + "': " + property + " " + value + "; allowed: " + allowed);
		this.kind = kind;
		this.routeId = owner;
		this.property = property;
		this.found = value;
		this.allowed = allowed;
		this.unknownName = unknownName;
	}

	/**
	 * A route argument that does not exist (a misspelt {@code windw}): {@code allowed} lists the names there are,
	 * and the failure analysis asks to replace the name rather than to set it.
	 * @param property the argument as written, with its path
	 * @param found what it is not, e.g. {@code is no argument of WindowRateLimit}
	 * @param allowed the arguments there are
	 */
	public static InvalidRouteConfigurationException unknownArgument(String routeId, String property, String found,
			String allowed) {
		return new InvalidRouteConfigurationException("route", routeId, property, found, allowed, true);
	}

	/** Whether the property itself is unknown (its name is wrong), rather than its value. */
	public boolean isUnknownName() {
		return this.unknownName;
	}

	/** What is wrong: {@code route}, {@code plan} or {@code override for}. */
	public String getKind() {
		return this.kind;
	}

	/** What was found, e.g. {@code is '60', a number without a unit...}. */
	public String getFound() {
		return this.found;
	}

	/** What is allowed instead. */
	public String getAllowed() {
		return this.allowed;
	}

	/** The route, plan or override target whose configuration is wrong. */
	public String getRouteId() {
		return this.routeId;
	}

	public String getProperty() {
		return this.property;
	}

}
