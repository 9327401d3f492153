package io.windowlimiter.accuracy;

/**
 * The requests one client sends in a trace.
 *
 * @param client the client's key, plain characters only, so it is used in Redis keys as it is
 * @param times when each request arrives, in ms since the epoch, in time order (equal times allowed)
 */
public record ClientTrace(String client, long[] times) {

	public ClientTrace {
		for (int i = 1; i < times.length; i++) {
			if (times[i] < times[i - 1]) {
				throw new IllegalArgumentException("Request times of " + client + " must not go back in time");
			}
		}
	}

	public int size() {
		return this.times.length;
	}

}
