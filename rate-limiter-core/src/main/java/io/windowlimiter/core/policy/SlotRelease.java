package io.windowlimiter.core.policy;

/**
 * Whether the adapter deciding a route gives each concurrency slot back when the response ends. Only the
 * {@code WindowRateLimit} filter (WebFlux) sees that end, and only when it is ordered before the gateway writes
 * the response, which it is where it needs to be. Where no slot is released a concurrency limit (the route's, a
 * plan's, an override's) is refused: its slots would stay taken for their whole window.
 */
public enum SlotRelease {

	/** The adapter releases no slot: the {@code RequestRateLimiter} filter, Server MVC. */
	NEVER,

	/** The adapter releases slots where the route's limits (or a plan's) count concurrency. */
	IF_COUNTED,

	/** The adapter releases slots whatever the limits: a filter ordered so anyway (one metering an LLM). */
	ALWAYS;

	/** Whether a route with these limits has its slots released. */
	boolean releases(boolean countsConcurrency) {
		return this == ALWAYS || (this == IF_COUNTED && countsConcurrency);
	}

}
