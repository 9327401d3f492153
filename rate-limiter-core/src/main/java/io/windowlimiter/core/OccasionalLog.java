package io.windowlimiter.core;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A kind of log line that requests, Redis's answers or the watchdog have to say: written at most once per
 * interval, and never on the caller's thread. A log write can block (a console pipe nobody reads, a full disk,
 * a remote appender), and an event loop that waits for it holds every request it serves; so lines are made
 * and written on one daemon thread shared by all kinds. At most {@value #MAX_WAITING} lines wait for it: while
 * the log is stuck, later ones are dropped and counted, and the next line written says how many, so a stuck
 * log never grows memory.
 */
public final class OccasionalLog {

	/** Lines made but not yet written, of all kinds, at most. */
	static final int MAX_WAITING = 64;

	private static final ExecutorService WRITER = Executors.newSingleThreadExecutor(task -> {
		Thread thread = new Thread(task, "window-rate-limiter-log");
		thread.setDaemon(true);
		return thread;
	});

	private static final AtomicInteger waiting = new AtomicInteger();

	private static final AtomicLong dropped = new AtomicLong();

	private final Log logger;

	/** At most one line per this many nanoseconds; 0: every line. */
	private final long intervalNanos;

	private final AtomicLong lastWritten = new AtomicLong(Long.MIN_VALUE);

	/**
	 * @param source the class whose logger writes the lines
	 * @param interval at most one line per this interval; zero: every line (a caller that limits them itself)
	 */
	public OccasionalLog(Class<?> source, Duration interval) {
		this.logger = LogFactory.getLog(source);
		this.intervalNanos = interval.toNanos();
	}

	/** A warning, made by {@code line} on the writer's thread, unless one was written within the interval. */
	public void warn(Supplier<String> line) {
		write(true, line);
	}

	/** {@link #warn} at info level. */
	public void info(Supplier<String> line) {
		write(false, line);
	}

	private void write(boolean warning, Supplier<String> line) {
		if (!mayWrite()) {
			return;
		}
		if (waiting.incrementAndGet() > MAX_WAITING) {
			waiting.decrementAndGet();
			dropped.incrementAndGet();
			return;
		}
		// the lines dropped since the last one taken: this one comes after them
		long lost = dropped.getAndSet(0);
		WRITER.execute(() -> {
			try {
				String text = (lost == 0) ? line.get()
						: line.get() + " (" + lost + " rate-limiter log line(s) dropped before it: the log was not written)";
				if (warning) {
					this.logger.warn(text);
				}
				else {
					this.logger.info(text);
				}
			}
			catch (RuntimeException ex) {
				// a line that cannot be made or written is lost, not the writer
			}
			finally {
				waiting.decrementAndGet();
			}
		});
	}

	/**
	 * Whether a line would be written now, claiming nothing: a caller on the request path asks before it makes
	 * the line's {@link Supplier}, so that nothing is allocated between lines.
	 */
	public boolean isDue() {
		return this.intervalNanos == 0 || due(this.lastWritten.get());
	}

	/** Lines made or waiting to be, of all kinds. */
	static int waitingLines() {
		return waiting.get();
	}

	/** {@link #isDue}, and the interval claimed for this line. */
	private boolean mayWrite() {
		if (this.intervalNanos == 0) {
			return true;
		}
		long last = this.lastWritten.get();
		return due(last) && this.lastWritten.compareAndSet(last, System.nanoTime());
	}

	/** The interval has passed since a line was last written at {@code last}. */
	private boolean due(long last) {
		return last == Long.MIN_VALUE || System.nanoTime() - last >= this.intervalNanos;
	}

}
