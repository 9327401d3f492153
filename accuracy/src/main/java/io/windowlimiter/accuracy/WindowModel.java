package io.windowlimiter.accuracy;

import java.util.ArrayDeque;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * Each algorithm's rule written again in Java, following the history the script actually produced.
 *
 * <p>It yields what the script cannot report: before each request, the algorithm's estimate of how
 * many requests it allowed in the last window (its whole basis for deciding) next to the true number
 * in {@code (now - window, now]}. It also re-decides every request and recomputes every remaining
 * count, so a script that strays from the rule the README states shows up as a mismatch.
 */
public final class WindowModel {

	private WindowModel() {
	}

	/**
	 * Walks one client's requests with the script's answers. The token bucket's burst is the limit.
	 * @param algorithm whose rule to apply
	 * @param times the client's request times, in order
	 * @param answers what the script answered for each request
	 * @param limit requests per window
	 * @param window the window in ms
	 */
	public static Followed follow(Algorithm algorithm, long[] times, ScriptReplay.Answers answers, long limit,
			long window) {
		double[] estimates = new double[times.length];
		int[] trueCounts = new int[times.length];
		int mismatches = 0;
		ArrayDeque<Long> allowedInWindow = new ArrayDeque<>();
		long index = Long.MIN_VALUE;
		long current = 0;
		long previous = 0;
		// GCRA: the theoretical arrival time, in the script's floating point; none yet.
		double interval = (double) window / limit;
		double tat = Double.NEGATIVE_INFINITY;
		for (int i = 0; i < times.length; i++) {
			long now = times[i];
			while (!allowedInWindow.isEmpty() && allowedInWindow.peekFirst() <= now - window) {
				allowedInWindow.removeFirst();
			}
			long nowIndex = Math.floorDiv(now, window);
			if (nowIndex != index) {
				previous = (nowIndex == index + 1) ? current : 0;
				current = 0;
				index = nowIndex;
			}
			long elapsed = now - nowIndex * window;
			long trueCount = allowedInWindow.size();

			// Each rule: the algorithm's count estimate, whether it allows, and the remaining it reports then.
			View view = switch (algorithm) {
				case FIXED_WINDOW -> new View(current, current < limit, limit - current - 1);
				case SLIDING_LOG, SLIDING_LOG_SORTED_SET -> new View(trueCount, trueCount < limit, limit - trueCount - 1);
				case SLIDING_WINDOW_COUNTER -> {
					// In whole numbers, as the script compares: estimate * window.
					long used = previous * (window - elapsed) + current * window;
					yield new View((double) used / window, used + window <= limit * window,
							(limit * window - used - window) / window);
				}
				case TOKEN_BUCKET -> {
					// The bucket's level in requests: what it still holds against the client, draining steadily.
					double from = Math.max(tat, now);
					double allowAt = from + interval - limit * interval;
					yield new View((from - now) / interval, !(now < allowAt), (long) Math.floor((now - allowAt) / interval));
				}
				// requests in flight, not per window: accuracy runs replay rates only (Algorithm.rates())
				case CONCURRENCY -> throw new IllegalArgumentException("concurrency is not a rate");
			};
			double estimate = view.estimate();
			boolean allows = view.allows();
			long remaining = view.remaining();
			estimates[i] = estimate;
			trueCounts[i] = (int) trueCount;
			boolean allowed = answers.allowed()[i];
			// What a denial reports as remaining is the scripts' own business; an allowed one must match.
			if (allows != allowed || (allowed && remaining != answers.remaining()[i])) {
				mismatches++;
			}
			if (allowed) {
				allowedInWindow.addLast(now);
				current++;
				tat = Math.max(tat, now) + interval;
			}
		}
		return new Followed(estimates, trueCounts, mismatches);
	}

	private record View(double estimate, boolean allows, long remaining) {
	}

	/**
	 * The model's view of one client's requests.
	 *
	 * @param estimates before each request, the algorithm's estimate of requests allowed in the last window
	 * @param trueCounts before each request, the requests it really allowed in {@code (now - window, now]}
	 * @param mismatches requests whose decision or remaining count differs from the script's answer
	 */
	public record Followed(double[] estimates, int[] trueCounts, int mismatches) {
	}

}
