package io.windowlimiter.app.it;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One client's requests fired at once: {@code concurrency} keep-alive connections (spread over the given
 * gateways in turn) each send requests back to back until {@code requests} have been sent in all.
 */
final class Race {

	private Race() {
	}

	static Tally fire(List<GatewayJar> gateways, String path, String apiKey, int requests, int concurrency,
			Duration bound) {
		Tally tally = new Tally();
		AtomicInteger left = new AtomicInteger(requests);
		ExecutorService pool = Executors.newFixedThreadPool(concurrency);
		try {
			List<Future<?>> connections = new ArrayList<>();
			for (int i = 0; i < concurrency; i++) {
				GatewayJar gateway = gateways.get(i % gateways.size());
				connections.add(pool.submit(() -> {
					try (KeepAliveConnection connection = KeepAliveConnection.open(gateway.port(), bound)) {
						while (left.getAndDecrement() > 0) {
							tally.answered(connection.get(path, apiKey).status());
						}
					}
					catch (KeepAliveConnection.Unanswered ex) {
						tally.unanswered(gateway + ": " + ex.getMessage());
					}
					catch (KeepAliveConnection.NotKeptAlive ex) {
						tally.notKeptAlive(gateway + ": " + ex.getMessage());
					}
					catch (IOException ex) {
						tally.problem(gateway + ": " + ex);
					}
					return null;
				}));
			}
			for (Future<?> connection : connections) {
				connection.get();
			}
			return tally;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			pool.shutdownNow();
		}
	}

}
