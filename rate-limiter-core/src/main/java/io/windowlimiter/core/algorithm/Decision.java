package io.windowlimiter.core.algorithm;

/**
 * One limit's answer for one request.
 *
 * @param allowed whether the request may pass
 * @param remaining units of quota left now (after this request when allowed)
 * @param resetMillis time until quota frees (see each script for what that means for it)
 * @param retryAfterMillis time after which a retry is allowed, 0 when allowed, {@link #NEVER} when the
 * request costs more than the limit allows at once (the configuration checks keep such a cost out)
 */
public record Decision(boolean allowed, long remaining, long resetMillis, long retryAfterMillis) {

	/** The retry-after of a request that can never pass: its cost is above the limit (or burst). */
	public static final long NEVER = -1;

	/** Whether this request can never pass, however long the client waits. */
	public boolean never() {
		return this.retryAfterMillis == NEVER;
	}

}
