package io.windowlimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The project's occasional log lines (near a limit, an unknown plan, Redis failing or back) are made and
 * written on a thread of their own, at most once per interval: a log that blocks holds no caller, and a log
 * stuck for good keeps at most {@link OccasionalLog#MAX_WAITING} lines waiting.
 */
public class OccasionalLogTests {

	private final Logger logger = (Logger) LoggerFactory.getLogger(OccasionalLogTests.class);

	private final List<String> written = new CopyOnWriteArrayList<>();

	private final CountDownLatch release = new CountDownLatch(1);

	private volatile boolean blocking;

	private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
		@Override
		protected void append(ILoggingEvent event) {
			if (OccasionalLogTests.this.blocking) {
				try {
					OccasionalLogTests.this.release.await(10, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			OccasionalLogTests.this.written.add(event.getFormattedMessage());
		}
	};

	@BeforeEach
	void attach() {
		this.appender.start();
		this.logger.addAppender(this.appender);
	}

	@AfterEach
	void detach() throws InterruptedException {
		this.release.countDown();
		awaitWritten();
		this.logger.detachAppender(this.appender);
	}

	@Test
	void aLogWriteThatBlocksHoldsNoCaller() throws InterruptedException {
		this.blocking = true;
		OccasionalLog log = new OccasionalLog(OccasionalLogTests.class, Duration.ZERO);
		long started = System.nanoTime();
		for (int i = 0; i < 10; i++) {
			int line = i;
			log.warn(() -> "line " + line);
		}
		assertThat(Duration.ofNanos(System.nanoTime() - started)).as("ten lines asked for while the log blocks")
			.isLessThan(Duration.ofMillis(500));
		assertThat(this.written).isEmpty();
		this.release.countDown();
		awaitWritten();
		assertThat(this.written).containsExactly("line 0", "line 1", "line 2", "line 3", "line 4", "line 5", "line 6",
				"line 7", "line 8", "line 9");
	}

	@Test
	void aLineIsMadeAndWrittenAtMostOncePerInterval() throws InterruptedException {
		OccasionalLog log = new OccasionalLog(OccasionalLogTests.class, Duration.ofHours(1));
		AtomicInteger made = new AtomicInteger();
		Thread caller = Thread.currentThread();
		AtomicInteger madeOnCaller = new AtomicInteger();
		for (int i = 0; i < 100; i++) {
			log.info(() -> {
				made.incrementAndGet();
				if (Thread.currentThread() == caller) {
					madeOnCaller.incrementAndGet();
				}
				return "near";
			});
		}
		awaitWritten();
		assertThat(made).hasValue(1);
		assertThat(madeOnCaller).as("made on the caller's thread").hasValue(0);
		assertThat(this.written).containsExactly("near");
	}

	/**
	 * The bound is shared by all kinds in the JVM: a line of another test's component may hold a place (one did
	 * in CI), so this test's lines are counted as at most 64, and the drop count as at least the rest.
	 */
	@Test
	void aStuckLogKeepsAtMostSixtyFourLinesAndTheNextOneWrittenSaysHowManyWereDropped() throws InterruptedException {
		awaitWritten();
		this.blocking = true;
		OccasionalLog log = new OccasionalLog(OccasionalLogTests.class, Duration.ZERO);
		for (int i = 0; i < 200; i++) {
			int line = i;
			log.warn(() -> "line " + line);
		}
		this.blocking = false;
		this.release.countDown();
		// not awaitWritten(): its marker would be dropped too, and take the count, until the lines are written
		long started = System.nanoTime();
		while (OccasionalLog.waitingLines() > 0) {
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("the waiting lines written")
				.isLessThan(Duration.ofSeconds(10));
			Thread.sleep(5);
		}
		int kept = this.written.size();
		assertThat(kept).isBetween(OccasionalLog.MAX_WAITING - 4, OccasionalLog.MAX_WAITING);
		assertThat(this.written.get(kept - 1)).isEqualTo("line " + (kept - 1));
		log.warn(() -> "after");
		awaitWritten();
		Matcher after = Pattern.compile("after \\((\\d+) rate-limiter log line\\(s\\) dropped before it: the log was "
				+ "not written\\)").matcher(this.written.get(kept));
		assertThat(after.matches()).as(this.written.get(kept)).isTrue();
		assertThat(Long.parseLong(after.group(1))).isGreaterThanOrEqualTo(200 - kept);
	}

	/** Returns once every line asked for before has been written (the writer takes them in order). */
	public static void awaitWritten() throws InterruptedException {
		CountDownLatch reached = new CountDownLatch(1);
		// on another logger than the tests': written, but not among their lines
		new OccasionalLog(OccasionalLog.class, Duration.ZERO).info(() -> {
			reached.countDown();
			return "(the test's marker: every line before this one is written)";
		});
		assertThat(reached.await(15, TimeUnit.SECONDS)).as("the log writer reached the marker").isTrue();
	}

}
