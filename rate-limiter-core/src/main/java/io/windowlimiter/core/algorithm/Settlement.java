package io.windowlimiter.core.algorithm;

import java.util.List;

/**
 * What the settle script did with one reservation.
 *
 * @param applied false when the reservation had been settled before: this call changed nothing
 * @param changes per limit, in the reservation's order: units given back (negative) or charged (positive);
 * a refund gives back only what the limit still held of the reservation, so it may be less than asked,
 * and zero once the reservation's window has passed (empty when not applied)
 * @param leftForReset how many limits were left alone because an operator reset their keys after the reservation
 * was made (what it held went with the reset)
 */
public record Settlement(boolean applied, List<Long> changes, long leftForReset) {

	/**
	 * Reads the settle script's reply: {1, then the change per limit, then the limits left for a reset}, or
	 * {0, ...} when settled before.
	 */
	static Settlement fromReply(List<Long> reply, int limits) {
		if (!reply.isEmpty() && reply.get(0) == 0L) {
			return new Settlement(false, List.of(), 0);
		}
		if (reply.size() != 2 + limits || reply.get(0) != 1L) {
			throw new IllegalStateException("Expected 1 and " + (limits + 1) + " numbers from the settle script, got "
					+ reply);
		}
		return new Settlement(true, List.copyOf(reply.subList(1, 1 + limits)), reply.get(1 + limits));
	}

}
