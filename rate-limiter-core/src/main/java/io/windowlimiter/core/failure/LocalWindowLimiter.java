package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.windowlimiter.core.algorithm.CalendarPeriod;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.algorithm.WindowPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The stand-in for Redis in fail-mode {@code local}, in this instance's memory, per route and client: a
 * sliding window counter for a window measured from the epoch, a count per local period for a calendar
 * quota (from the period's start in its zone to its end, as {@code calendar.lua} counts), and a client's
 * penalty ({@code block-for}) on the route, and a concurrency limit's requests in flight on this instance. It only ever sees this instance's traffic, so routes give it
 * their limit divided by the number of instances. Memory is bounded: at most {@code maxEntries} entries
 * (least recently used go first); a window's count is dropped two windows after its last use, a period's
 * when the period ends, a block when it ends.
 */
public class LocalWindowLimiter {

	private final Cache<String, Entry> entries;

	/** Concurrency limits' requests in flight on this instance, by key; absent at 0. */
	private final ConcurrentHashMap<String, Long> inFlight = new ConcurrentHashMap<>();

	public LocalWindowLimiter(long maxEntries) {
		this.entries = Caffeine.newBuilder().maximumSize(maxEntries).expireAfter(new UntilUseless()).build();
	}

	/**
	 * Decides one request the way {@code sliding_window_counter.lua} does, on the local clock.
	 * @param key route and client
	 * @param limit requests per window for this instance
	 * @param cost what the request consumes, at most the limit
	 */
	public Decision decide(String key, long limit, Duration window, long cost, long nowMillis) {
		return sliding(key, limit, window.toMillis(), cost, nowMillis, true);
	}

	private Decision decide(String key, WindowPolicy limit, long cost, long nowMillis, boolean record) {
		if (limit.algorithm().countsRequests()) {
			return inFlight(key, limit, record);
		}
		long own = Math.min(cost, limit.limit());
		CalendarPeriod calendar = limit.calendar();
		if (calendar == null) {
			return sliding(key, limit.limit(), limit.windowMillis(), own, nowMillis, record);
		}
		long[] edges = calendar.edges(nowMillis);
		long start = edges[1];
		long end = edges[2];
		// the period in the key: a new period starts at zero, the last one's count expires at its end
		String periodKey = key + '@' + start;
		Entry found = this.entries.get(periodKey, k -> new Period(end, nowMillis));
		Period entry = (found instanceof Period period) ? period : replace(periodKey, new Period(end, nowMillis));
		synchronized (entry) {
			return entry.decide(limit.limit(), own, nowMillis, record);
		}
	}

	/**
	 * A concurrency limit in memory: the requests of this instance in flight, each one slot until
	 * {@link #release} gives it back. Entries leave when their count is back to 0, so memory follows the
	 * requests in flight.
	 */
	private Decision inFlight(String key, WindowPolicy policy, boolean record) {
		long limit = policy.limit();
		long[] held = new long[1];
		boolean[] allowed = new boolean[1];
		this.inFlight.compute(key, (k, count) -> {
			long now = (count != null) ? count : 0;
			allowed[0] = now < limit;
			held[0] = (allowed[0] && record) ? now + 1 : now;
			return (held[0] > 0) ? held[0] : null;
		});
		if (!allowed[0]) {
			// no one knows when a response ends: try again in a second, as the script answers
			return new Decision(false, 0, policy.windowMillis(), Math.min(1_000, policy.windowMillis()));
		}
		return new Decision(true, limit - held[0] - (record ? 0 : 1), policy.windowMillis(), 0);
	}

	/** Gives back one slot of each of these concurrency keys, taken by {@link #decideAll}. */
	public void release(List<String> keys) {
		for (String key : keys) {
			this.inFlight.computeIfPresent(key, (k, count) -> (count > 1) ? count - 1 : null);
		}
	}

	private Decision sliding(String key, long limit, long windowMillis, long cost, long nowMillis, boolean record) {
		Entry found = this.entries.get(key, k -> new Window(windowMillis));
		Window entry = (found instanceof Window window) ? window : replace(key, new Window(windowMillis));
		synchronized (entry) {
			return entry.decide(limit, windowMillis, Math.min(cost, limit), nowMillis, record);
		}
	}

	/** An entry of another kind under the key (none is expected: keys name their kind) gives way. */
	private <E extends Entry> E replace(String key, E entry) {
		this.entries.put(key, entry);
		return entry;
	}

	/** Decides one request against several limits without a penalty. */
	public Verdict decideAll(List<String> keys, List<WindowPolicy> limits, long cost, long nowMillis) {
		return decideAll(keys, limits, null, cost, nowMillis);
	}

	/**
	 * Decides one request against several limits, in memory, all or nothing as the script does: the request
	 * is counted by every limit when all allow it, else by none. With a penalty, as the script: a blocked
	 * client is refused by the limit that blocked it and charged nothing; a refusal sets the block for the
	 * longest {@code block-for} of the limits refusing.
	 * @param keys one per limit
	 * @param limits this instance's share of each limit, in the same order
	 * @param penalty the client's block on the route and each limit's block-for; null for none
	 * @return the verdict, with the limit to report and the limits refusing as Redis's
	 */
	public Verdict decideAll(List<String> keys, List<WindowPolicy> limits, @Nullable Penalty penalty, long cost,
			long nowMillis) {
		long[] costs = new long[keys.size()];
		Arrays.fill(costs, cost);
		return decideAll(keys, limits, penalty, costs, nowMillis);
	}

	/**
	 * As {@link #decideAll(List, List, Penalty, long, long)}, for a request costing each limit its own: an LLM
	 * call's token estimate in its token limits, its request cost in the others.
	 * @param costs one per limit, in the same order
	 */
	public Verdict decideAll(List<String> keys, List<WindowPolicy> limits, @Nullable Penalty penalty, long[] costs,
			long nowMillis) {
		long cost = Arrays.stream(costs).max().orElse(0);
		Block block = (penalty != null && cost > 0) ? blockOf(penalty.key(), nowMillis) : null;
		List<Decision> decisions = new ArrayList<>(keys.size());
		boolean allowed = true;
		for (int i = 0; i < keys.size(); i++) {
			// a blocked client's limits are read as at cost 0, for the headers
			Decision decision = decide(keys.get(i), limits.get(i), (block != null) ? 0 : costs[i], nowMillis, false);
			if (block != null && i == block.limitIndex) {
				long left = block.endMillis - nowMillis;
				decision = new Decision(false, 0, Math.max(decision.resetMillis(), left), left);
			}
			allowed &= decision.allowed();
			decisions.add(decision);
		}
		if (allowed) {
			for (int i = 0; i < keys.size(); i++) {
				// two requests of one client on two event loops may pass the check above together: as the
				// script's all-or-nothing, this is a local estimate, not an exact count
				decisions.set(i, decide(keys.get(i), limits.get(i), costs[i], nowMillis, true));
			}
			return new Verdict(true, List.copyOf(decisions), 0, nowMillis, 0);
		}
		long blocked = (block != null) ? block.endMillis - nowMillis
				: (penalty != null && cost > 0) ? block(penalty, decisions, nowMillis) : 0;
		return new Verdict(false, List.copyOf(decisions), blocked, nowMillis, 0);
	}

	private @Nullable Block blockOf(String key, long nowMillis) {
		return (this.entries.getIfPresent(key) instanceof Block block && nowMillis < block.endMillis) ? block : null;
	}

	/** Sets the block for the longest block-for among the limits refusing; its time, 0 when none has one. */
	private long block(Penalty penalty, List<Decision> decisions, long nowMillis) {
		long longest = 0;
		int by = -1;
		for (int i = 0; i < decisions.size(); i++) {
			Decision decision = decisions.get(i);
			long blockFor = penalty.blockForMillis().get(i);
			if (blockFor > longest && !decision.allowed() && !decision.never()) {
				longest = blockFor;
				by = i;
			}
		}
		if (by < 0) {
			return 0;
		}
		this.entries.put(penalty.key(), new Block(by, nowMillis + longest, longest));
		Decision refusing = decisions.get(by);
		decisions.set(by, new Decision(false, refusing.remaining(), Math.max(refusing.resetMillis(), longest),
				Math.max(refusing.retryAfterMillis(), longest)));
		return longest;
	}

	/**
	 * A client's penalty on a route.
	 * @param key the client's block key on the route (its Redis key: one block per route and client)
	 * @param blockForMillis each limit's block-for, in the order of the limits; 0 for none
	 */
	public record Penalty(String key, List<Long> blockForMillis) {
	}

	/** How many entries are held now (for tests of the bound). */
	public long size() {
		this.entries.cleanUp();
		return this.entries.estimatedSize();
	}

	/** What one key holds, and how long it is worth keeping. */
	private abstract static class Entry {

		/** How long to keep the entry from when it was made. */
		abstract long lifeNanos();

		/** Whether each use keeps it {@link #lifeNanos()} longer. */
		abstract boolean renewedByUse();

	}

	/** A sliding window counter: the counts of the current and the previous window. */
	private static final class Window extends Entry {

		private final long windowMillis;

		private long index = Long.MIN_VALUE;

		private long current;

		private long previous;

		Window(long windowMillis) {
			this.windowMillis = windowMillis;
		}

		@Override
		long lifeNanos() {
			// each decision may count in it: keep it two windows from its last use
			return Duration.ofMillis(2 * this.windowMillis).toNanos();
		}

		@Override
		boolean renewedByUse() {
			return true;
		}

		/** The decision; counted only when {@code record} and allowed. */
		Decision decide(long limit, long window, long cost, long now, boolean record) {
			long nowIndex = Math.floorDiv(now, window);
			long elapsed = now - nowIndex * window;
			if (nowIndex == this.index + 1) {
				this.previous = this.current;
				this.current = 0;
			}
			else if (nowIndex != this.index) {
				this.previous = 0;
				this.current = 0;
			}
			this.index = nowIndex;
			// estimate * window, in whole numbers, as in the script
			long used = this.previous * (window - elapsed) + this.current * window;
			if (used + cost * window <= limit * window) {
				if (record) {
					this.current += cost;
				}
				used += cost * window;
				return new Decision(true, (limit * window - used) / window, window - elapsed, 0);
			}
			long wait = (this.current + cost <= limit)
					? window - (limit - this.current - cost) * window / this.previous - elapsed
					: window - elapsed + window - (limit - cost) * window / this.current;
			return new Decision(false, Math.max(0, (limit * window - used) / window), wait, wait);
		}

	}

	/** A calendar quota's count in one local period, as {@code calendar.lua}'s fixed window. */
	private static final class Period extends Entry {

		private final long endMillis;

		private final long lifeNanos;

		private long count;

		Period(long endMillis, long nowMillis) {
			this.endMillis = endMillis;
			this.lifeNanos = Duration.ofMillis(Math.max(1, endMillis - nowMillis)).toNanos();
		}

		@Override
		long lifeNanos() {
			return this.lifeNanos;
		}

		@Override
		boolean renewedByUse() {
			return false;
		}

		/** Reset and Retry-After: until the period ends. Counted only when {@code record} and allowed. */
		Decision decide(long limit, long cost, long now, boolean record) {
			long untilEnd = Math.max(1, this.endMillis - now);
			if (this.count + cost > limit) {
				return new Decision(false, Math.max(0, limit - this.count), untilEnd, untilEnd);
			}
			long remaining = limit - this.count - cost;
			if (record) {
				this.count += cost;
			}
			return new Decision(true, remaining, untilEnd, 0);
		}

	}

	/** A client blocked on a route by the limit at {@code limitIndex}, until {@code endMillis}. */
	private static final class Block extends Entry {

		final int limitIndex;

		final long endMillis;

		private final long lifeNanos;

		Block(int limitIndex, long endMillis, long blockForMillis) {
			this.limitIndex = limitIndex;
			this.endMillis = endMillis;
			this.lifeNanos = Duration.ofMillis(blockForMillis).toNanos();
		}

		@Override
		long lifeNanos() {
			return this.lifeNanos;
		}

		@Override
		boolean renewedByUse() {
			return false;
		}

	}

	/** Windows live on while used; periods and blocks until they end. */
	private static final class UntilUseless implements Expiry<String, Entry> {

		@Override
		public long expireAfterCreate(String key, Entry value, long currentTime) {
			return value.lifeNanos();
		}

		@Override
		public long expireAfterUpdate(String key, Entry value, long currentTime, long currentDuration) {
			// a new block replaces the old one
			return value.lifeNanos();
		}

		@Override
		public long expireAfterRead(String key, Entry value, long currentTime, long currentDuration) {
			return value.renewedByUse() ? value.lifeNanos() : currentDuration;
		}

	}

}
