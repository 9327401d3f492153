package io.windowlimiter.core.operations;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Space-Saving sketch (Metwally, Agrawal, El Abbadi, 2005): the most frequent items of a stream in a
 * fixed number of counters, whatever the number of distinct items. When every counter is taken, a new
 * item replaces the item with the smallest count and inherits that count as its possible overcount
 * ({@code error}). Any item seen more than {@code total / counters} times is held, and a held item's
 * count is never below its true count nor above it by more than its error. Not thread-safe.
 */
final class SpaceSaving {

	private final int counters;

	private final Map<String, Counter> held;

	private long total;

	/** @param counters how many items to hold at most; memory is bounded by this alone */
	SpaceSaving(int counters) {
		if (counters < 1) {
			throw new IllegalArgumentException("counters must be at least 1, was " + counters);
		}
		this.counters = counters;
		this.held = new HashMap<>(counters * 2);
	}

	/** Counts one occurrence of {@code item}. */
	void offer(String item) {
		this.total++;
		Counter counter = this.held.get(item);
		if (counter != null) {
			counter.count++;
			return;
		}
		if (this.held.size() < this.counters) {
			this.held.put(item, new Counter(1, 0));
			return;
		}
		// A linear scan: with a few dozen counters it is cheaper than keeping them ordered on every offer.
		Map.Entry<String, Counter> smallest = null;
		for (Map.Entry<String, Counter> entry : this.held.entrySet()) {
			if (smallest == null || entry.getValue().count < smallest.getValue().count) {
				smallest = entry;
			}
		}
		this.held.remove(smallest.getKey());
		long inherited = smallest.getValue().count;
		this.held.put(item, new Counter(inherited + 1, inherited));
	}

	/** Every held item, most frequent first. */
	List<Estimate> estimates() {
		List<Estimate> estimates = new ArrayList<>(this.held.size());
		this.held.forEach((item, counter) -> estimates.add(new Estimate(item, counter.count, counter.error)));
		estimates.sort(Estimate.MOST_FIRST);
		return estimates;
	}

	/** How many occurrences were offered in all. */
	long total() {
		return this.total;
	}

	/**
	 * An item's estimated count.
	 * @param item what was counted
	 * @param count at least the true count
	 * @param error by how much {@code count} may exceed the true count
	 */
	record Estimate(String item, long count, long error) {

		static final Comparator<Estimate> MOST_FIRST = Comparator.comparingLong(Estimate::count)
			.reversed()
			.thenComparing(Estimate::item);

	}

	private static final class Counter {

		long count;

		final long error;

		Counter(long count, long error) {
			this.count = count;
			this.error = error;
		}

	}

}
