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
 * body; empty when the request passes or its refusal is not about quota (fail-mode closed, a deny list)
 * @param status the status of a refusal: {@link #FORBIDDEN} for a client on a deny list or blocked by an
 * operator; 0 for the adapter's usual refusal status (429 unless the route says otherwise)
 *
 * <p>Made once per request: the maps and lists are the core's, not copied; adapters read them.
 */
public record Admission(boolean passes, Map<String, String> headers, List<String> violated, int status) {

	/** The status of a client refused for who it is, not for its quota. */
	public static final int FORBIDDEN = 403;

	/** An admission whose refusal, if any, has the adapter's usual status. */
	public Admission(boolean passes, Map<String, String> headers, List<String> violated) {
		this(passes, headers, violated, 0);
	}

	/** Whether the request is refused for who the client is (403), not for its quota. */
	public boolean forbidden() {
		return this.status == FORBIDDEN;
	}

}
