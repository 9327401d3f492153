package io.windowlimiter.core.autoconfigure;

/** RFC 9457 problem details on refused requests. */
public class ProblemDetailsProperties {

	/**
	 * Whether a refused request gets an application/problem+json body of the IETF rate-limit draft's
	 * quota-exceeded type, naming the violated policies.
	 */
	private boolean enabled = false;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

}
