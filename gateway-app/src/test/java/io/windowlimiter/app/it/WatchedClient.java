package io.windowlimiter.app.it;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * One client watched through a Redis fault, on its own sliding-log route and one keep-alive connection:
 * {@value #USED_BEFORE} requests before the fault, {@value #SENT_DURING} while Redis fails (in flight when it
 * fails, all answered by the fail-mode), then what it has left once Redis is back. A request the fail-mode
 * answered and Redis charged later shows as quota missing. Keeps every answer's latency.
 */
final class WatchedClient implements AutoCloseable {

	/**
	 * The watched client's limit: 20 per 2 minutes on a sliding log, which counts exactly and has no window
	 * edge to wait for, so a request charged after the fault shows whenever the case runs.
	 */
	static final int QUOTA = 20;

	/** Requests of the watched client before the fault: it has {@code QUOTA - USED_BEFORE} left. */
	static final int USED_BEFORE = 10;

	/** Requests of the watched client while Redis fails, all answered by the fail-mode. */
	static final int SENT_DURING = 100;

	/** The pause between the requests sent while Redis fails, so that they span the fault's first seconds. */
	private static final long PAUSE_DURING_MILLIS = 30;

	private static final Duration NO_DEADLINE = Duration.ofNanos(Long.MAX_VALUE);

	/**
	 * What the watched client must still have after the fault: of its {@value #SENT_DURING} requests, at most
	 * the one in flight when Redis stopped and a trial or so may be charged.
	 */
	static final int LEFT_AT_LEAST = 8;

	private final GatewayJar gateway;

	private final KeepAliveConnection connection;

	private final String path;

	private final String key;

	private final List<Long> nanos = new ArrayList<>();

	private long failModeWhileCounting;

	private volatile int sentDuring;

	private WatchedClient(GatewayJar gateway, KeepAliveConnection connection, String path, String key) {
		this.gateway = gateway;
		this.connection = connection;
		this.path = path;
		this.key = key;
	}

	/** The route args of the watched client's limit. */
	static Map<String, Object> limit() {
		return RouteFile.limit("sliding-log", QUOTA, "2m");
	}

	/** @param route a route with {@link #limit()}, which no other client of the case uses with this key */
	static WatchedClient open(GatewayJar gateway, Limits.Route route, String key, Duration unansweredAfter)
			throws IOException {
		return new WatchedClient(gateway, KeepAliveConnection.open(gateway.port(), unansweredAfter), route.path("x"),
				key);
	}

	/** The requests before the fault: returns how many were allowed. */
	int sendBefore() {
		return send(USED_BEFORE, 0, NO_DEADLINE).allowed();
	}

	/** Starts the requests sent while Redis fails, on another thread: completes with how many were allowed. */
	CompletableFuture<Integer> sendDuringFault() {
		return sendDuringFault(NO_DEADLINE);
	}

	/**
	 * As {@link #sendDuringFault()}, sending no more once {@code atMost} has passed and more than the whole quota
	 * went (charged, they would leave nothing whichever Redis counts), so that the fault need not last longer
	 * where answers are slow: {@link #sentDuringFault()} says how many went.
	 */
	CompletableFuture<Integer> sendDuringFault(Duration atMost) {
		return CompletableFuture.supplyAsync(() -> {
			Sent during = send(SENT_DURING, PAUSE_DURING_MILLIS, atMost);
			this.sentDuring = during.sent();
			return during.allowed();
		});
	}

	/** How many requests {@link #sendDuringFault} sent, once it completed. */
	int sentDuringFault() {
		return this.sentDuring;
	}

	/**
	 * What the client has left once Redis is back: requests until the first refused, more than it could have.
	 * Counts the gateway's fail-mode answers meanwhile ({@link #failModeWhileCounting()}): one would be uncounted.
	 */
	int countLeft() {
		long failModeBefore = this.gateway.failModeAnswers();
		int left = send(QUOTA + 5, 0, NO_DEADLINE).allowed();
		this.failModeWhileCounting = this.gateway.failModeAnswers() - failModeBefore;
		return left;
	}

	/** The gateway's fail-mode answers while {@link #countLeft()} counted. */
	long failModeWhileCounting() {
		return this.failModeWhileCounting;
	}

	/** The slowest answer the client has had, in nanoseconds. */
	long slowestNanos() {
		synchronized (this.nanos) {
			return this.nanos.stream().mapToLong(Long::longValue).max().orElse(0);
		}
	}

	/**
	 * Sends up to {@code count} requests one after another, stopping at the first refused, or once
	 * {@code atMost} has passed and more than {@link #QUOTA} went.
	 */
	private Sent send(int count, long pauseMillis, Duration atMost) {
		long started = System.nanoTime();
		int sent = 0;
		int allowed = 0;
		while (sent < count && (sent <= QUOTA || System.nanoTime() - started < atMost.toNanos())) {
			KeepAliveConnection.Answer answer;
			try {
				answer = this.connection.get(this.path, this.key);
			}
			catch (IOException ex) {
				throw new IllegalStateException("the watched client got no answer to request " + (sent + 1), ex);
			}
			sent++;
			synchronized (this.nanos) {
				this.nanos.add(answer.nanos());
			}
			if (answer.status() != 200) {
				break;
			}
			allowed++;
			if (pauseMillis > 0) {
				GatewayJar.sleep(pauseMillis);
			}
		}
		return new Sent(sent, allowed);
	}

	private record Sent(int sent, int allowed) {
	}

	@Override
	public void close() {
		this.connection.close();
	}

}
