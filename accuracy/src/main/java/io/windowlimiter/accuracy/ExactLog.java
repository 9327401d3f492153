package io.windowlimiter.accuracy;

import java.util.ArrayDeque;

/**
 * The exact reference, in plain Java: a sliding log kept in memory. A request at time {@code now} is
 * allowed while fewer than {@code limit} allowed requests lie in {@code (now - window, now]}; denied
 * requests are not logged. These are the sliding log script's rules, and the run checks that the
 * script decides every request exactly as this class does.
 */
public final class ExactLog {

	private ExactLog() {
	}

	/** Decides one client's requests, in order. */
	public static boolean[] decide(long[] times, long limit, long windowMillis) {
		boolean[] allowed = new boolean[times.length];
		ArrayDeque<Long> log = new ArrayDeque<>();
		for (int i = 0; i < times.length; i++) {
			long now = times[i];
			while (!log.isEmpty() && log.peekFirst() <= now - windowMillis) {
				log.removeFirst();
			}
			if (log.size() < limit) {
				log.addLast(now);
				allowed[i] = true;
			}
		}
		return allowed;
	}

}
