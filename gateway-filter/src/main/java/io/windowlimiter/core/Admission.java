package io.windowlimiter.core;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What the core decided for one request, ready for an adapter to answer with.
 *
 * @param passes whether the request goes on downstream (a shadow route's refusals pass)
 * @param headers the rate-limit headers of the limit closest to refusing, as configured; empty when Redis
 * could not decide and the route fails open
 * @param violated when refused by a limit, the names of the limits that refused it, for a problem-details
 * body; empty when the request passes or its refusal is not about quota (fail-mode closed)
 * @param remaining what is left of the reported limit (the one closest to refusing), for adapters that
 * decide one request by several policies and report the closest of all; {@link Long#MAX_VALUE} when no
 * limit was reported (Redis could not decide and the route fails open)
 * @param reservation what Redis counted for this request, for an adapter whose cost depends on the response
 * to {@linkplain RateLimiterCore#settle settle}; null when nothing was counted in Redis (refused, refused on a
 * shadow route, answered by the deny cache or the fail-mode, cost 0)
 *
 * <p>Made once per request: the maps and lists are the core's, not copied; adapters read them.
 */
public record Admission(boolean passes, Map<String, String> headers, List<String> violated, long remaining,
		@Nullable Reservation reservation) {

	/** An admission that reserved nothing in Redis. */
	public Admission(boolean passes, Map<String, String> headers, List<String> violated, long remaining) {
		this(passes, headers, violated, remaining, null);
	}

}
