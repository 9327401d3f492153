package io.windowlimiter.core;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.windowlimiter.core.algorithm.WindowPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The reservations of a cost per limit (an LLM route's token estimate) that this instance made and has not
 * settled yet, by the client's key of each limit: what the {@code ratelimits} endpoint's client view shows
 * as reserved <em>here</em>. This instance's only: calls running on another instance are in its memory, not
 * Redis (their reservations are counted in Redis, as reserved, like these).
 *
 * <p>Bounded by the calls running here: a reservation leaves when it is settled, whatever the outcome, and
 * one an adapter never settles leaves once the longest window of its limits has passed since it was made
 * (looked for whenever its key gets another, and on every key every 1,024 reservations).
 */
public final class ReservationsHere {

	/** After this many reservations, every key is looked through for those outlived (none were settled). */
	private static final int SWEEP_EVERY = 1024;

	/**
	 * Each key's reservations, an array replaced whole on every change (inside the map's compute, so changes
	 * to one key are serial): a key holds one or two at a time, and a set per key cost more than the copies.
	 */
	private final Map<String, Reservation[]> byKey = new ConcurrentHashMap<>();

	private final AtomicInteger added = new AtomicInteger();

	void add(Reservation reservation, long now) {
		if (this.added.incrementAndGet() % SWEEP_EVERY == 0) {
			// a client whose keys get no other reservation (a fresh key per call) is not left holding one
			for (String key : this.byKey.keySet()) {
				this.byKey.computeIfPresent(key, (k, held) -> without(held, null, now));
			}
		}
		for (String key : reservation.keys()) {
			this.byKey.compute(key, (k, held) -> {
				Reservation[] kept = (held != null) ? without(held, null, now) : null;
				if (kept == null) {
					return new Reservation[] { reservation };
				}
				Reservation[] more = Arrays.copyOf(kept, kept.length + 1);
				more[kept.length] = reservation;
				return more;
			});
		}
	}

	void remove(Reservation reservation) {
		for (String key : reservation.keys()) {
			this.byKey.computeIfPresent(key, (k, held) -> without(held, reservation, Long.MIN_VALUE));
		}
	}

	/** What the reservations not yet settled here hold of the limit counted on this key; null when none. */
	@Nullable Held of(String key, long now) {
		Reservation[] held = this.byKey.get(key);
		if (held == null) {
			return null;
		}
		long calls = 0;
		long units = 0;
		for (Reservation reservation : held) {
			int limit = reservation.keys().indexOf(key);
			if (limit >= 0 && !outlived(reservation, now)) {
				calls++;
				units += reservation.costs()[limit];
			}
		}
		return (calls > 0) ? new Held(calls, units) : null;
	}

	/**
	 * {@code held} less {@code gone} and those outlived at {@code now} ({@link Long#MIN_VALUE}: none is): the same
	 * array when nothing left, null when nothing is kept.
	 */
	private static Reservation @Nullable [] without(Reservation[] held, @Nullable Reservation gone, long now) {
		int kept = 0;
		for (Reservation reservation : held) {
			if (keeps(reservation, gone, now)) {
				kept++;
			}
		}
		if (kept == held.length) {
			return held;
		}
		if (kept == 0) {
			return null;
		}
		Reservation[] left = new Reservation[kept];
		int i = 0;
		for (Reservation reservation : held) {
			if (keeps(reservation, gone, now)) {
				left[i++] = reservation;
			}
		}
		return left;
	}

	private static boolean keeps(Reservation reservation, @Nullable Reservation gone, long now) {
		return reservation != gone && (now == Long.MIN_VALUE || !outlived(reservation, now));
	}

	/** How many keys hold a reservation not yet settled, for tests. */
	int keys() {
		return this.byKey.size();
	}

	/** Past the longest window of its limits: it counts in none of them any more, settled or not. */
	private static boolean outlived(Reservation reservation, long now) {
		List<WindowPolicy> policies = reservation.policies();
		long longest = 0;
		for (WindowPolicy policy : policies) {
			longest = Math.max(longest, policy.windowMillis());
		}
		return now - reservation.reservedAt() > longest;
	}

	/**
	 * The calls admitted here and not settled yet on one limit of a client, and what they reserved of it (an
	 * LLM call's token estimate in a token limit; the request's cost in a request limit).
	 */
	public record Held(long calls, long reserved) {
	}

}
