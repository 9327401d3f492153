package io.windowlimiter.core.algorithm;

import java.util.List;

/**
 * What the settle script did with one reservation.
 *
 * @param applied false when the reservation had been settled before: this call changed nothing
 * @param changes per limit, in the reservation's order: units given back (negative) or charged (positive);
 * a refund gives back only what the limit still held of the reservation, so it may be less than asked,
 * and zero once the reservation's window has passed (empty when not applied)
 */
public record Settlement(boolean applied, List<Long> changes) {

	/** Reads the settle script's reply: {1, then the change per limit}, or {0, ...} when settled before. */
	static Settlement fromReply(List<Long> reply, int limits) {
		if (!reply.isEmpty() && reply.get(0) == 0L) {
			return new Settlement(false, List.of());
		}
		if (reply.size() != 1 + limits || reply.get(0) != 1L) {
			throw new IllegalStateException("Expected 1 and " + limits + " numbers from the settle script, got " + reply);
		}
		return new Settlement(true, List.copyOf(reply.subList(1, reply.size())));
	}

}
