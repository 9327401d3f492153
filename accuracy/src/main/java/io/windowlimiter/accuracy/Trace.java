package io.windowlimiter.accuracy;

import java.time.Duration;
import java.util.List;

/**
 * A named request trace and the limit it is replayed against.
 *
 * @param name short name, also the route id of the trace's Redis keys
 * @param description what traffic the trace stands for, for the report
 * @param level offered requests per window divided by the limit, on average over the trace
 * @param limit requests allowed per window
 * @param window the window
 * @param clients every client's requests; clients are independent of each other
 */
public record Trace(String name, String description, double level, long limit, Duration window,
		List<ClientTrace> clients) {

	public long windowMillis() {
		return this.window.toMillis();
	}

	/** All requests of all clients. */
	public long requests() {
		long requests = 0;
		for (ClientTrace client : this.clients) {
			requests += client.size();
		}
		return requests;
	}

}
