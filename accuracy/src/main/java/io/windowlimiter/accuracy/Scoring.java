package io.windowlimiter.accuracy;

import java.util.List;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * Turns one algorithm's answers on a trace into a {@link Score}.
 *
 * <p>Every algorithm and the exact log each replay the same offered trace on their own; each request's
 * decision is compared with the exact log's decision for that request. Once two decisions differ the
 * histories differ, and later differences that follow from it count too, as they would for a client.
 */
public final class Scoring {

	private Scoring() {
	}

	public static Score score(Trace trace, Algorithm algorithm, List<ScriptReplay.Answers> answers) {
		long limit = trace.limit();
		long window = trace.windowMillis();
		long requests = 0;
		long allowed = 0;
		long exactAllowed = 0;
		long wronglyAllowed = 0;
		long wronglyDenied = 0;
		long mostInWindow = 0;
		long clientsOverLimit = 0;
		long clientsLimited = 0;
		double errorOfLimit = 0;
		double errorOfTrue = 0;
		long withTrueCount = 0;
		long mismatches = 0;
		for (int c = 0; c < trace.clients().size(); c++) {
			long[] times = trace.clients().get(c).times();
			boolean[] decided = answers.get(c).allowed();
			boolean[] exact = ExactLog.decide(times, limit, window);
			WindowModel.Followed followed = WindowModel.follow(algorithm, times, answers.get(c), limit, window);
			mismatches += followed.mismatches();
			for (int i = 0; i < times.length; i++) {
				requests++;
				allowed += decided[i] ? 1 : 0;
				exactAllowed += exact[i] ? 1 : 0;
				wronglyAllowed += (decided[i] && !exact[i]) ? 1 : 0;
				wronglyDenied += (!decided[i] && exact[i]) ? 1 : 0;
				double error = Math.abs(followed.estimates()[i] - followed.trueCounts()[i]);
				errorOfLimit += error / limit;
				if (followed.trueCounts()[i] > 0) {
					errorOfTrue += error / followed.trueCounts()[i];
					withTrueCount++;
				}
			}
			boolean limited = false;
			for (boolean allowedExactly : exact) {
				limited |= !allowedExactly;
			}
			clientsLimited += limited ? 1 : 0;
			long most = mostAllowedInAnyWindow(times, decided, window);
			mostInWindow = Math.max(mostInWindow, most);
			clientsOverLimit += (most > limit) ? 1 : 0;
		}
		return new Score(trace.name(), algorithm, requests, allowed, exactAllowed, wronglyAllowed, wronglyDenied,
				(double) mostInWindow / limit, trace.clients().size(), clientsOverLimit, clientsLimited,
				(requests == 0) ? 0 : errorOfLimit / requests, (withTrueCount == 0) ? 0 : errorOfTrue / withTrueCount,
				mismatches);
	}

	/**
	 * The most allowed requests in any span {@code (s, s + window]}. The busiest span can always be
	 * slid to end at an allowed request, so only those ends are tried.
	 */
	public static long mostAllowedInAnyWindow(long[] times, boolean[] allowed, long window) {
		long[] passed = new long[times.length];
		int count = 0;
		for (int i = 0; i < times.length; i++) {
			if (allowed[i]) {
				passed[count++] = times[i];
			}
		}
		long most = 0;
		int oldest = 0;
		for (int newest = 0; newest < count; newest++) {
			while (passed[oldest] <= passed[newest] - window) {
				oldest++;
			}
			most = Math.max(most, newest - oldest + 1);
		}
		return most;
	}

}
