package io.windowlimiter.core.autoconfigure;

import io.windowlimiter.core.RateLimitHeaders;

/** Which rate-limit headers responses carry, under which names. */
public class HeaderProperties {

	/** Whether to send X-RateLimit-Limit, -Remaining and -Reset. */
	private boolean xEnabled = true;

	/** Name of the header with the limit. */
	private String limit = RateLimitHeaders.LIMIT;

	/** Name of the header with the remaining quota. */
	private String remaining = RateLimitHeaders.REMAINING;

	/** Name of the header with the seconds until quota frees. */
	private String reset = RateLimitHeaders.RESET;

	/** Whether to send the IETF draft's RateLimit-Policy and RateLimit. */
	private boolean ietfEnabled = true;

	/** Name of the header listing the policies. */
	private String policy = RateLimitHeaders.POLICY;

	/** Name of the header with the state of the policy closest to running out. */
	private String rateLimit = RateLimitHeaders.RATE_LIMIT;

	public boolean isXEnabled() {
		return this.xEnabled;
	}

	public void setXEnabled(boolean xEnabled) {
		this.xEnabled = xEnabled;
	}

	public String getLimit() {
		return this.limit;
	}

	public void setLimit(String limit) {
		this.limit = limit;
	}

	public String getRemaining() {
		return this.remaining;
	}

	public void setRemaining(String remaining) {
		this.remaining = remaining;
	}

	public String getReset() {
		return this.reset;
	}

	public void setReset(String reset) {
		this.reset = reset;
	}

	public boolean isIetfEnabled() {
		return this.ietfEnabled;
	}

	public void setIetfEnabled(boolean ietfEnabled) {
		this.ietfEnabled = ietfEnabled;
	}

	public String getPolicy() {
		return this.policy;
	}

	public void setPolicy(String policy) {
		this.policy = policy;
	}

	public String getRateLimit() {
		return this.rateLimit;
	}

	public void setRateLimit(String rateLimit) {
		this.rateLimit = rateLimit;
	}

}
