package io.windowlimiter.core.operations;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import io.windowlimiter.core.RateLimiterCore;

/**
 * Who is being limited: per route, on this instance, the clients refused most in the last few minutes, in
 * bounded memory. Each route keeps a ring of {@link SpaceSaving} sketches, one per time slot; a read adds
 * up the slots still in the window. So memory is routes x stripes x slots x counters whatever the number
 * of clients, and a client of an old slot drops out once its slot leaves the window.
 *
 * <p>Counts are estimates: a listed client's {@code denials} may be too high by at most its {@code error},
 * and may miss its denials in a slot where more than {@code counters} distinct clients were refused and it
 * was among the rarest. Clients refused more than a {@code 1 / counters} share of a slot's denials on
 * one stripe are always listed.
 *
 * <p>Requests are refused on every event loop at once, in a flood, so each route's ring is striped: a
 * thread offers to its own stripe and never waits for another's lock; a read adds the stripes up. A
 * client key is hostile input: one longer than {@value #MAX_SHOWN} characters is held as its start, its
 * length and its hash, so the memory held is bounded whatever clients send.
 */
public class DeniedClients implements RateLimiterCore.DenialListener {

	/** Clients held per route, stripe and slot. */
	public static final int DEFAULT_COUNTERS = 64;

	/** The length of one slot. */
	public static final Duration DEFAULT_SLOT = Duration.ofMinutes(1);

	/** Slots per window: the window is the last five minutes. */
	public static final int DEFAULT_SLOTS = 5;

	/** Client keys longer than this are held shortened (see {@link #shown(String)}). */
	public static final int MAX_SHOWN = 128;

	/** Stripes per route: enough that each event loop of a usual gateway has one of its own. */
	private static final int STRIPES = Math.min(16, Runtime.getRuntime().availableProcessors() * 2);

	private static final AtomicInteger nextStripe = new AtomicInteger();

	/** Each thread's stripe, handed out in turn, so event loops spread evenly. */
	private static final ThreadLocal<Integer> stripe = ThreadLocal
		.withInitial(() -> Math.floorMod(nextStripe.getAndIncrement(), STRIPES));

	private final int counters;

	private final long slotNanos;

	private final int slots;

	private final LongSupplier nanoTime;

	private final Map<String, Ring[]> routes = new ConcurrentHashMap<>();

	/**
	 * @param counters clients held per route and slot
	 * @param slot the length of one slot
	 * @param slots how many slots make the window
	 * @param nanoTime this instance's monotonic clock, {@code System::nanoTime} outside tests
	 */
	public DeniedClients(int counters, Duration slot, int slots, LongSupplier nanoTime) {
		if (counters < 1 || slots < 1 || slot.toNanos() < 1) {
			throw new IllegalArgumentException("need at least one counter and one slot of positive length");
		}
		this.counters = counters;
		this.slotNanos = slot.toNanos();
		this.slots = slots;
		this.nanoTime = nanoTime;
	}

	/** {@value #DEFAULT_COUNTERS} clients per route and minute, over the last five minutes. */
	public static DeniedClients ofDefaults() {
		return new DeniedClients(DEFAULT_COUNTERS, DEFAULT_SLOT, DEFAULT_SLOTS, System::nanoTime);
	}

	@Override
	public void denied(String routeId, String clientKey) {
		Ring[] stripes = this.routes.computeIfAbsent(routeId, id -> newStripes());
		stripes[stripe.get()].offer(shown(clientKey), slotNow());
	}

	/**
	 * The client key as held and listed: itself when at most {@value #MAX_SHOWN} characters long, else its
	 * first 64, its length and its hash, enough to tell an operator who it is without holding kilobytes.
	 */
	static String shown(String clientKey) {
		if (clientKey.length() <= MAX_SHOWN) {
			return clientKey;
		}
		return clientKey.substring(0, 64) + "...(" + clientKey.length() + " chars, hash "
				+ Integer.toHexString(clientKey.hashCode()) + ")";
	}

	private Ring[] newStripes() {
		Ring[] stripes = new Ring[STRIPES];
		for (int i = 0; i < STRIPES; i++) {
			stripes[i] = new Ring();
		}
		return stripes;
	}

	/** The window the counts cover. */
	public Duration window() {
		return Duration.ofNanos(this.slotNanos * this.slots);
	}

	/** Up to {@code limit} clients of the route refused most within the window, most first. */
	public List<DeniedClient> top(String routeId, int limit) {
		Ring[] stripes = this.routes.get(routeId);
		if (stripes == null) {
			return List.of();
		}
		long now = slotNow();
		Map<String, long[]> sums = new HashMap<>();
		for (Ring ring : stripes) {
			ring.addTo(sums, now);
		}
		List<SpaceSaving.Estimate> merged = new ArrayList<>(sums.size());
		sums.forEach((client, sum) -> merged.add(new SpaceSaving.Estimate(client, sum[0], sum[1])));
		merged.sort(SpaceSaving.Estimate.MOST_FIRST);
		return merged.stream()
			.limit(limit)
			.map(estimate -> new DeniedClient(estimate.item(), estimate.count(), estimate.error()))
			.toList();
	}

	private long slotNow() {
		return Math.floorDiv(this.nanoTime.getAsLong(), this.slotNanos);
	}

	/**
	 * One client's refusals within the window.
	 * @param client the client's key, shortened when long (see {@link #shown(String)})
	 * @param denials requests refused, an estimate at least the true count of the slots that list it
	 * @param error by how much {@code denials} may be too high
	 */
	public record DeniedClient(String client, long denials, long error) {
	}

	/** One stripe of a route's slots; synchronized, as a thread without a stripe of its own may share one. */
	private final class Ring {

		private final SpaceSaving[] sketches = new SpaceSaving[DeniedClients.this.slots];

		private final long[] slotOf = new long[DeniedClients.this.slots];

		synchronized void offer(String client, long slot) {
			int at = (int) Math.floorMod(slot, (long) this.sketches.length);
			if (this.sketches[at] == null || this.slotOf[at] != slot) {
				this.sketches[at] = new SpaceSaving(DeniedClients.this.counters);
				this.slotOf[at] = slot;
			}
			this.sketches[at].offer(client);
		}

		/** Adds the counts and errors of the slots still in the window to {@code sums}, per client. */
		synchronized void addTo(Map<String, long[]> sums, long now) {
			for (int i = 0; i < this.sketches.length; i++) {
				if (this.sketches[i] != null && now - this.slotOf[i] < this.sketches.length) {
					for (SpaceSaving.Estimate estimate : this.sketches[i].estimates()) {
						long[] sum = sums.computeIfAbsent(estimate.item(), item -> new long[2]);
						sum[0] += estimate.count();
						sum[1] += estimate.error();
					}
				}
			}
		}

	}

}
