package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.windowlimiter.core.OccasionalLog;
import reactor.core.publisher.MonoSink;

/**
 * What the guard tells of its failures: each failed call counted, and logged at most once per
 * {@code failure-log-interval} with how many failed since the last line; entering and leaving a stall always
 * logged. Both under the guard's own logger.
 */
final class GuardReports {

	private final AtomicLong failures = new AtomicLong();

	private final AtomicLong unreported = new AtomicLong();

	/** Stalls and recoveries, written off the answering threads: one line each. */
	private final OccasionalLog reports = new OccasionalLog(RedisGuard.class, Duration.ZERO);

	/** Failed decisions, at most one line per {@code failure-log-interval}, with how many since the last. */
	private final OccasionalLog failureReports;

	/** @param logInterval the shortest time between two log lines about failed decisions */
	GuardReports(Duration logInterval) {
		this.failureReports = new OccasionalLog(RedisGuard.class, logInterval);
	}

	/** How many decisions failed since start. */
	long failures() {
		return this.failures.get();
	}

	/**
	 * Logs on the log's own thread, not on the one answering a decision (an event loop, Lettuce's, a timer) nor
	 * the watchdog's: a log write that blocks (a console pipe nobody reads) must never hold an answer or a tick.
	 */
	void report(String message) {
		this.reports.warn(() -> message);
	}

	void fail(MonoSink<?> sink, Throwable error) {
		this.failures.incrementAndGet();
		this.unreported.incrementAndGet();
		if (this.failureReports.isDue()) {
			// counted when written: every failure up to that moment is in one line
			this.failureReports.warn(() -> this.unreported.getAndSet(0) + " rate-limit decision(s) failed since the "
					+ "last report, routes applied their fail-mode; latest: " + error);
		}
		sink.error(error);
	}

}
