package io.windowlimiter.app.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The limiter's algorithms (and storages) as route args, and waiting for room in a window. */
final class Limits {

	private Limits() {
	}

	/**
	 * One route per algorithm and storage: {@code <prefix>-<name>}. Windows: {@code window} for all but the
	 * token bucket, which gets an hour so that no token refills during a test and it passes exactly its
	 * burst (= limit).
	 */
	static List<Route> everyAlgorithm(String prefix, int limit, String window) {
		return List.of(new Route(prefix + "-fixed-window", RouteFile.limit("fixed-window", limit, window), true),
				new Route(prefix + "-sliding-log", RouteFile.limit("sliding-log", limit, window), false),
				new Route(prefix + "-sliding-log-sorted-set",
						RouteFile.with(RouteFile.limit("sliding-log", limit, window), "log-storage", "sorted-set"), false),
				new Route(prefix + "-sliding-window-counter", RouteFile.limit("sliding-window-counter", limit, window),
						true),
				new Route(prefix + "-token-bucket", RouteFile.limit("token-bucket", limit, "1h"), false));
	}

	/**
	 * If less than {@code needed} is left of the current clock-aligned {@code window}, waits for the next
	 * one, so that a burst lies within one window (fixed window and counter count per aligned window).
	 */
	static void awaitRoomInWindow(Duration window, Duration needed) {
		long now = System.currentTimeMillis();
		long left = window.toMillis() - now % window.toMillis();
		if (left < needed.toMillis()) {
			GatewayJar.sleep(left + 50);
		}
	}

	/** True if {@code from} and {@code to} (epoch ms) lie in different clock-aligned windows. */
	static boolean crossesEdge(long from, long to, Duration window) {
		return from / window.toMillis() != to / window.toMillis();
	}

	/** A route and whether its algorithm counts per clock-aligned window (so a window edge matters). */
	record Route(String id, Map<String, Object> args, boolean aligned) {

		String path(String rest) {
			return "/" + this.id + "/" + rest;
		}

	}

}
