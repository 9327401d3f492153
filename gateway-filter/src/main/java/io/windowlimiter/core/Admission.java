package io.windowlimiter.core;

import java.util.List;
import java.util.Map;

/**
 * What the core decided for one request, ready for an adapter to answer with.
 *
 * @param passes whether the request goes on downstream (a shadow route's refusals pass)
 * @param headers the rate-limit headers of the limit closest to refusing, as configured; empty when Redis
 * could not decide and the route fails open
 * @param violated when refused by a limit, the names of the limits that refused it, for a problem-details
 * body; empty when the request passes or its refusal is not about quota (fail-mode closed)
 * @param delayMillis how long the request is held before it passes (a route's {@code max-delay}): its slot
 * is reserved in Redis that far ahead; 0 when it passes at once or is refused
 *
 * <p>Made once per request: the maps and lists are the core's, not copied; adapters read them.
 */
public record Admission(boolean passes, Map<String, String> headers, List<String> violated, long delayMillis) {

	/** An admission that is not held. */
	public Admission(boolean passes, Map<String, String> headers, List<String> violated) {
		this(passes, headers, violated, 0);
	}

}
