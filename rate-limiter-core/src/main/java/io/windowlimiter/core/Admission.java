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
 * body; empty when the request passes or its refusal is not about quota (fail-mode closed, a deny list)
 * @param status the status to refuse with when it is not the adapter's usual one (429 or as configured):
 * {@link #FORBIDDEN} for a client on a deny list or blocked by an operator, the route's {@code quota-status}
 * when a calendar quota refused; 0 for the usual
 * @param remaining what is left of the reported limit (the one closest to refusing), for adapters that
 * decide one request by several policies and report the closest of all; {@link Long#MAX_VALUE} when no
 * limit was reported (Redis could not decide and the route fails open)
 * @param delayMillis how long the request is held before it passes (a route's {@code max-delay}): its slot
 * is reserved in Redis that far ahead; 0 when it passes at once or is refused
 * @param reservation what Redis counted for this request, for an adapter whose cost depends on the response
 * to {@linkplain RateLimiterCore#settle settle}; null when nothing was counted in Redis (refused, refused on a
 * shadow route, answered by the deny cache or the fail-mode, cost 0)
 * @param slots the concurrency slots the request holds until its response ends, for the adapter to
 * {@linkplain Slots#release release} then; null when it holds none (no concurrency limit, refused, or passed
 * by fail-mode open)
 * @param quotas on an LLM route, its request and token limits and the limit that refused, for the provider's
 * headers and error body ({@link ProviderAnswers}); null elsewhere, and when Redis could not decide
 *
 * <p>Made once per request: the maps and lists are the core's, not copied; adapters read them.
 */
public record Admission(boolean passes, Map<String, String> headers, List<String> violated, int status,
		long remaining, long delayMillis, @Nullable Reservation reservation, @Nullable Slots slots,
		@Nullable LlmQuotas quotas) {

	/** The status of a client refused for who it is, not for its quota. */
	public static final int FORBIDDEN = 403;

	/**
	 * An admission with the usual refusal status, not held, that reserved nothing in Redis. (A status is set
	 * with {@link #withStatus}: this constructor's last number is what remains.)
	 */
	public Admission(boolean passes, Map<String, String> headers, List<String> violated, long remaining) {
		this(passes, headers, violated, 0, remaining, 0, null, null, null);
	}

	/** As {@link #Admission(boolean, Map, List, long)}, reporting no limit. */
	public Admission(boolean passes, Map<String, String> headers, List<String> violated) {
		this(passes, headers, violated, Long.MAX_VALUE);
	}

	/** This admission refused with {@code status} (0: the usual). */
	public Admission withStatus(int status) {
		return (status == this.status) ? this : new Admission(this.passes, this.headers, this.violated, status,
				this.remaining, this.delayMillis, this.reservation, this.slots, this.quotas);
	}

	/** This admission held for {@code delayMillis} before it passes. */
	public Admission withDelay(long delayMillis) {
		return new Admission(this.passes, this.headers, this.violated, this.status, this.remaining, delayMillis,
				this.reservation, this.slots, this.quotas);
	}

	/** This admission with what Redis counted for it. */
	public Admission withReservation(@Nullable Reservation reservation) {
		return new Admission(this.passes, this.headers, this.violated, this.status, this.remaining, this.delayMillis,
				reservation, this.slots, this.quotas);
	}

	/** This admission holding these concurrency slots until its response ends. */
	public Admission withSlots(@Nullable Slots slots) {
		return new Admission(this.passes, this.headers, this.violated, this.status, this.remaining, this.delayMillis,
				this.reservation, slots, this.quotas);
	}

	/** This admission with its LLM route's quotas by unit. */
	public Admission withQuotas(@Nullable LlmQuotas quotas) {
		return new Admission(this.passes, this.headers, this.violated, this.status, this.remaining, this.delayMillis,
				this.reservation, this.slots, quotas);
	}

	/**
	 * Whether the request is refused for who the client is (403), not for its quota: a quota refused with
	 * {@code quota-status: 403} names the limits it violated, a deny list or an operator's block none.
	 */
	public boolean forbidden() {
		return this.status == FORBIDDEN && !this.passes && this.violated.isEmpty();
	}

}
