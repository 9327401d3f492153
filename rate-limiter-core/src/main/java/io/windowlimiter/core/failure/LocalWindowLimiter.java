package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.WindowPolicy;

/**
 * The stand-in for Redis in fail-mode {@code local}: a sliding window counter per route and client in
 * this instance's memory (for a concurrency limit, a count of the requests in flight). It only ever sees this instance's traffic, so routes give it their limit
 * divided by the number of instances. Memory is bounded: at most {@code maxClients} entries (least
 * recently used go first), each dropped two windows after its last write.
 */
public class LocalWindowLimiter {

	private final Cache<String, Counts> counts;

	/** Concurrency limits' requests in flight on this instance, by key; absent at 0. */
	private final ConcurrentHashMap<String, Long> inFlight = new ConcurrentHashMap<>();

	public LocalWindowLimiter(long maxClients) {
		this.counts = Caffeine.newBuilder().maximumSize(maxClients).expireAfter(new TwoWindows()).build();
	}

	/**
	 * Decides one request the way {@code sliding_window_counter.lua} does, on the local clock.
	 * @param key route and client
	 * @param limit requests per window for this instance
	 * @param cost what the request consumes, at most the limit
	 */
	public Decision decide(String key, long limit, Duration window, long cost, long nowMillis) {
		return decide(key, limit, window, cost, nowMillis, true);
	}

	private Decision decide(String key, WindowPolicy policy, long cost, long nowMillis, boolean record) {
		if (policy.algorithm().countsRequests()) {
			return inFlight(key, policy, record);
		}
		return decide(key, policy.limit(), policy.window(), cost, nowMillis, record);
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

	private Decision decide(String key, long limit, Duration window, long cost, long nowMillis, boolean record) {
		long windowMillis = window.toMillis();
		Counts entry = this.counts.get(key, k -> new Counts(windowMillis));
		synchronized (entry) {
			return entry.decide(limit, windowMillis, Math.min(cost, limit), nowMillis, record);
		}
	}

	/**
	 * Decides one request against several limits, in memory, all or nothing as the script does: the request
	 * is counted by every limit when all allow it, else by none.
	 * @param keys one per limit
	 * @param limits this instance's share of each limit, in the same order
	 * @return the limit to report (the first denying one, else the one with the least left) and its decision
	 */
	public Reported decideAll(List<String> keys, List<WindowPolicy> limits, long cost, long nowMillis) {
		for (int i = 0; i < keys.size(); i++) {
			Decision decision = decide(keys.get(i), limits.get(i), cost, nowMillis, false);
			if (!decision.allowed()) {
				return new Reported(i, decision);
			}
		}
		Reported closest = null;
		for (int i = 0; i < keys.size(); i++) {
			// two requests of one client on two event loops may pass the check above together: as the
			// script's all-or-nothing, this is a local estimate, not an exact count
			Decision decision = decide(keys.get(i), limits.get(i), cost, nowMillis, true);
			if (closest == null || decision.remaining() < closest.decision().remaining()) {
				closest = new Reported(i, decision);
			}
		}
		return closest;
	}

	/** Which limit a local answer reports, and its decision. */
	public record Reported(int limitIndex, Decision decision) {
	}

	/** How many clients are held now (for tests of the bound). */
	public long size() {
		this.counts.cleanUp();
		return this.counts.estimatedSize();
	}

	private static final class Counts {

		private final long windowMillis;

		private long index = Long.MIN_VALUE;

		private long current;

		private long previous;

		Counts(long windowMillis) {
			this.windowMillis = windowMillis;
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

	private static final class TwoWindows implements Expiry<String, Counts> {

		@Override
		public long expireAfterCreate(String key, Counts value, long currentTime) {
			return Duration.ofMillis(2 * value.windowMillis).toNanos();
		}

		@Override
		public long expireAfterUpdate(String key, Counts value, long currentTime, long currentDuration) {
			return Duration.ofMillis(2 * value.windowMillis).toNanos();
		}

		@Override
		public long expireAfterRead(String key, Counts value, long currentTime, long currentDuration) {
			// each decision reads the entry and may count in it: keep it two windows from now
			return Duration.ofMillis(2 * value.windowMillis).toNanos();
		}

	}

}
