package io.windowlimiter.core;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

/**
 * A log that blocks every write until released, as a console pipe nobody reads does: attached to one class's
 * logger for the tests that show no answer waits for a log write. Closing releases it, waits for the lines
 * asked for so far and detaches it.
 */
public final class BlockingLog extends AppenderBase<ILoggingEvent> implements AutoCloseable {

	private final Logger logger;

	private final CountDownLatch release = new CountDownLatch(1);

	private final CountDownLatch written = new CountDownLatch(1);

	private BlockingLog(Class<?> source) {
		this.logger = (Logger) LoggerFactory.getLogger(source);
	}

	/** Blocks the writes of {@code source}'s logger from now on. */
	public static BlockingLog on(Class<?> source) {
		BlockingLog log = new BlockingLog(source);
		log.start();
		log.logger.addAppender(log);
		return log;
	}

	@Override
	protected void append(ILoggingEvent event) {
		try {
			this.release.await(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.written.countDown();
	}

	/** Lets the writes through. */
	public void release() {
		this.release.countDown();
	}

	/** Whether a line was written within {@code timeout}. */
	public boolean written(Duration timeout) throws InterruptedException {
		return this.written.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
	}

	@Override
	public void close() throws InterruptedException {
		release();
		OccasionalLogTests.awaitWritten();
		this.logger.detachAppender(this);
	}

}
