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
 * @param status the status to refuse with when it is not the adapter's usual one (429 or as configured):
 * the route's {@code quota-status} when a calendar quota refused; 0 for the usual
 *
 * <p>Made once per request: the maps and lists are the core's, not copied; adapters read them.
 */
public record Admission(boolean passes, Map<String, String> headers, List<String> violated, int status) {

	/** An admission refused, if at all, with the adapter's usual status. */
	public Admission(boolean passes, Map<String, String> headers, List<String> violated) {
		this(passes, headers, violated, 0);
	}

	/** This admission refused with {@code status} (0: the usual). */
	public Admission withStatus(int status) {
		return (status == this.status) ? this : new Admission(this.passes, this.headers, this.violated, status);
	}

}
