package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.lettuce.core.RedisCommandExecutionException;
import io.windowlimiter.core.BlockingLog;
import io.windowlimiter.core.OccasionalLogTests;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.RedisSystemException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guard's rules, with publishers standing in for Redis calls; {@link RedisFaultTests} uses a real Redis.
 * A stand-in that never answers counts the commands it sends: {@link #lazyCall} sends on subscription, as
 * the real call does, {@link #eagerCall} when the call is assembled, as the real call did before (it must
 * fail the test of what a stalled guard sends).
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisGuardTests {

	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(150);

	/** The watchdog's tick: a quarter of the stall timeout. */
	private static final Duration TICK = STALL.dividedBy(4);

	private final RedisGuard guard = new RedisGuard(TIMEOUT, STALL, Duration.ofHours(1));

	private final AtomicInteger sent = new AtomicInteger();

	/** The shape of the real call: the command is made and sent when the guard subscribes. */
	private Mono<String> lazyCall() {
		return Mono.defer(() -> {
			this.sent.incrementAndGet();
			return Mono.never();
		});
	}

	/** The shape of the call before the fix: sent while the call was assembled, whatever the guard does. */
	private Mono<String> eagerCall() {
		this.sent.incrementAndGet();
		return Mono.never();
	}

	@AfterEach
	void close() {
		this.guard.close();
	}

	private Object outcome(Mono<?> call) {
		return outcomeOf(this.guard.protect(call));
	}

	/** The value of a guarded call, or the error it failed with. */
	private static Object outcomeOf(Mono<?> guarded) {
		return guarded.cast(Object.class).onErrorResume(Mono::just).block(Duration.ofSeconds(5));
	}

	private long millisOf(Runnable action) {
		long start = System.nanoTime();
		action.run();
		return Duration.ofNanos(System.nanoTime() - start).toMillis();
	}

	@Test
	void failuresAreCountedButLoggedAtMostOncePerInterval(CapturedOutput output) throws InterruptedException {
		// written on the log's own thread (OccasionalLog): earlier tests' last lines first, then only this one's
		OccasionalLogTests.awaitWritten();
		int before = output.getOut().length();
		for (int i = 0; i < 50; i++) {
			outcome(Mono.error(new IllegalStateException("connection refused")));
		}
		assertThat(this.guard.failures()).isEqualTo(50);
		OccasionalLogTests.awaitWritten();
		assertThat(output.getOut().substring(before).split("rate-limit decision\\(s\\) failed", -1)).hasSize(2);
	}

	/**
	 * The report of failed decisions is written on the log's own thread: a log write that blocks (a console
	 * pipe nobody reads, a slow appender) must not hold the failed decision's answer, which goes to the
	 * route's fail-mode at once.
	 */
	@Test
	void aLogWriteThatBlocksDoesNotDelayTheAnswer() throws InterruptedException {
		try (BlockingLog log = BlockingLog.on(RedisGuard.class)) {
			Object[] result = new Object[1];
			long waited = millisOf(() -> result[0] = outcome(Mono.error(new IllegalStateException("connection refused"))));
			assertThat(result[0]).isInstanceOf(IllegalStateException.class);
			assertThat(waited).as("answered while the log write blocks").isLessThan(500);
			log.release();
			assertThat(log.written(Duration.ofSeconds(5))).as("reported").isTrue();
		}
	}

	@Test
	void aCallRedisNeverAnswersFailsAtTheStallTimeoutAndTheGuardStalls() {
		Object[] result = new Object[1];
		long waited = millisOf(() -> result[0] = outcome(Mono.never()));
		assertThat(result[0]).isInstanceOf(TimeoutException.class);
		assertThat(waited).isBetween(STALL.toMillis(), TIMEOUT.toMillis() - 1);
		assertThat(this.guard.isStalled()).isTrue();
	}

	@Test
	void whileStalledOneTrialAtATimeWaitsAndTheOthersFailAtOnce() {
		outcome(Mono.never());
		assertThat(this.guard.isStalled()).isTrue();
		Sinks.One<String> redis = Sinks.one();
		Disposable trial = this.guard.protect(redis.asMono()).subscribe(value -> { }, error -> { });
		long waited = millisOf(() -> assertThat(outcome(Mono.just("answered"))).isInstanceOf(TimeoutException.class));
		assertThat(waited).as("a call beside the trial does not wait").isLessThan(STALL.toMillis());
		redis.tryEmitValue("back");
		assertThat(this.guard.isStalled()).as("the trial's answer ends the stall").isFalse();
		assertThat(outcome(Mono.just("answered"))).isEqualTo("answered");
		trial.dispose();
	}

	/**
	 * A frozen Redis runs what was written to it once it thaws: a trial that sent its decision would charge a
	 * request the fail-mode answered. So a trial sends only the probe, and no request waits for it: the one
	 * that set it off fails at once, as the others do, and the probe's answer ends the stall.
	 */
	@Test
	void aTrialSendsOnlyTheProbeAndNoRequestWaitsForIt() {
		outcome(Mono.never());
		assertThat(this.guard.isStalled()).isTrue();
		AtomicInteger probes = new AtomicInteger();
		Mono<String> frozenProbe = Mono.defer(() -> {
			probes.incrementAndGet();
			return Mono.never();
		});
		Object[] trial = new Object[1];
		long waited = millisOf(() -> trial[0] = outcomeOf(this.guard.protect(RedisGuard.ONE_NODE, lazyCall(), frozenProbe)));
		assertThat(trial[0]).isInstanceOf(TimeoutException.class);
		assertThat(waited).as("the request that set the trial off").isLessThan(STALL.toMillis());
		assertThat(probes).hasValue(1);
		assertThat(outcomeOf(this.guard.protect(RedisGuard.ONE_NODE, lazyCall(), frozenProbe)))
			.as("beside a trial under way").isInstanceOf(TimeoutException.class);
		assertThat(probes).as("one trial at a time").hasValue(1);
		assertThat(this.sent).as("no decision sent while stalled").hasValue(0);
		// the probe is given up at the timeout; the next trial may go a stall timeout after that
		sleep(TIMEOUT.toMillis() + STALL.toMillis() + 20);
		Mono<String> answeredProbe = Mono.defer(() -> {
			probes.incrementAndGet();
			return Mono.just("1");
		});
		assertThat(outcomeOf(this.guard.protect(RedisGuard.ONE_NODE, lazyCall(), answeredProbe)))
			.isInstanceOf(TimeoutException.class);
		assertThat(probes).hasValue(2);
		assertThat(this.sent).hasValue(0);
		assertThat(this.guard.isStalled()).as("the probe's answer ends the stall").isFalse();
		assertThat(this.guard.protect(RedisGuard.ONE_NODE, Mono.just("decided"), answeredProbe)
			.block(Duration.ofSeconds(5))).isEqualTo("decided");
		assertThat(probes).as("no probe once Redis answers").hasValue(2);
	}

	@Test
	void aCancelledTrialMakesRoomForTheNextOneStallTimeoutLater() throws InterruptedException {
		outcome(Mono.never());
		Disposable trial = this.guard.protect(Mono.never()).subscribe(value -> { }, error -> { });
		trial.dispose();
		assertThat(outcome(Mono.just("answered"))).as("too soon for another trial")
			.isInstanceOf(TimeoutException.class);
		Thread.sleep(STALL.toMillis() + 10);
		assertThat(outcome(Mono.just("answered"))).as("the next call is the trial").isEqualTo("answered");
	}

	/** The hard bound is checked on the defaults users get: 600 ms, stall 400 ms, so a tick of 100 ms. */
	private static final Duration DEFAULT_STALL = Duration.ofMillis(400);

	private static final Duration BOUND = TIMEOUT.plus(DEFAULT_STALL.dividedBy(4));

	@Test
	void aCallThatWaitsWhileRedisAnswersOthersIsBoundOnlyByTheTimeout() {
		try (RedisGuard defaults = new RedisGuard(TIMEOUT, DEFAULT_STALL, Duration.ofHours(1))) {
			// Redis busy, not gone: other calls keep getting answers while this one waits
			Disposable others = answeringEvery(defaults, Duration.ofMillis(20));
			try {
				Object[] result = new Object[1];
				long waited = millisOf(() -> result[0] = outcomeOf(defaults.protect(Mono.never())));
				assertThat(result[0]).isInstanceOf(TimeoutException.class);
				assertThat(waited).isBetween(TIMEOUT.toMillis(), BOUND.toMillis());
				assertThat(defaults.isStalled()).isFalse();
			}
			finally {
				others.dispose();
			}
		}
	}

	/**
	 * Redis answering other decisions, one every {@code period}: a tick that comes while the last answer is
	 * still on its way is dropped, not an overflow that ends the stream (it did, once, on a loaded machine:
	 * then nothing answered and the guard rightly saw a stall).
	 */
	private static Disposable answeringEvery(RedisGuard guard, Duration period) {
		return Flux.interval(period).onBackpressureDrop().concatMap(i -> guard.protect(Mono.just(i))).subscribe();
	}

	/**
	 * On the default stall (400 ms; a timeout long enough for calls of twice that): with this class's 150 ms
	 * stall, a pause of the test JVM of 150 ms (a loaded 2-core machine) starved the answering stream and the
	 * guard rightly saw a stall.
	 */
	@Test
	void slowAnswersWithRedisAnsweringInBetweenAreNeverGivenUp() {
		try (RedisGuard defaults = new RedisGuard(Duration.ofSeconds(2), DEFAULT_STALL, Duration.ofHours(1))) {
			Disposable others = answeringEvery(defaults, Duration.ofMillis(10));
			try {
				// each call takes twice the stall timeout, but Redis answers someone every 10 ms
				Long failed = Flux.range(0, 60)
					.delayElements(Duration.ofMillis(5))
					.flatMap(i -> defaults.protect(Mono.delay(DEFAULT_STALL.multipliedBy(2)).thenReturn(i))
						.map(value -> 0L)
						.onErrorResume(error -> Mono.just(1L)))
					.reduce(Long::sum)
					.block(Duration.ofSeconds(10));
				assertThat(failed).isZero();
				assertThat(defaults.failures()).isZero();
			}
			finally {
				others.dispose();
			}
		}
	}

	@Test
	void anErrorReplyShowsRedisIsThere() {
		outcome(Mono.never());
		assertThat(this.guard.isStalled()).isTrue();
		outcome(Mono.error(new RedisSystemException("OOM", new RedisCommandExecutionException("OOM"))));
		assertThat(this.guard.isStalled()).isFalse();
	}

	/** How many commands K decisions sent while the guard was stalled. */
	private int sentWhileStalled(Supplier<Mono<String>> call, int decisions) {
		outcome(Mono.never());
		assertThat(this.guard.isStalled()).isTrue();
		this.sent.set(0);
		for (int i = 0; i < decisions; i++) {
			outcome(call.get());
		}
		return this.sent.get();
	}

	@Test
	void aStalledGuardSendsNothingButItsTrials() {
		// one trial waits the stall timeout; the next may go a stall timeout after it: at most 1 in 100 ms
		assertThat(sentWhileStalled(this::lazyCall, 100)).isLessThanOrEqualTo(1);
	}

	@Test
	void theEagerCallShapeSendsEveryDecisionThoughTheGuardIsStalled() {
		// the control: the same test on the call as it was before sees every decision sent
		assertThat(sentWhileStalled(this::eagerCall, 100)).isEqualTo(100);
	}

	@Test
	void theHardBoundHoldsWhileTheWatchdogIsHeldUp() {
		try (RedisGuard defaults = new RedisGuard(TIMEOUT, DEFAULT_STALL, Duration.ofHours(1))) {
			// Redis dead and the watchdog delayed by a second (a GC, CPU throttling): only the timeout can end the wait
			AtomicBoolean once = new AtomicBoolean();
			defaults.beforeTick = () -> {
				if (once.compareAndSet(false, true)) {
					sleep(1_000);
				}
			};
			sleep(DEFAULT_STALL.toMillis() / 2);
			Object[] result = new Object[1];
			long waited = millisOf(() -> result[0] = outcomeOf(defaults.protect(Mono.never())));
			assertThat(result[0]).isInstanceOf(TimeoutException.class);
			assertThat(waited).isLessThanOrEqualTo(BOUND.toMillis());
		}
	}

	@Test
	void theWatchdogOutlivesItsOwnFailures() {
		AtomicInteger ticks = new AtomicInteger();
		this.guard.beforeTick = () -> {
			if (ticks.incrementAndGet() < 3) {
				throw new IllegalStateException("a bug in a tick");
			}
		};
		sleep(TICK.toMillis() * 4);
		long waited = millisOf(() -> assertThat(outcome(Mono.never())).isInstanceOf(TimeoutException.class));
		assertThat(waited).as("the stall rule still applies").isLessThan(TIMEOUT.toMillis());
		assertThat(this.guard.isStalled()).isTrue();
	}

	@Test
	void anAskerOnNoEventLoopIsAnsweredOnNeitherRedisNorTheWatchdogThread() throws InterruptedException {
		AtomicReference<String> answeredOn = new AtomicReference<>();
		Sinks.One<String> redis = Sinks.one();
		this.guard.protect(redis.asMono()).subscribe(value -> answeredOn.set(Thread.currentThread().getName()));
		Thread lettuce = new Thread(() -> redis.tryEmitValue("reply"), "lettuce-epollEventLoop-stand-in");
		lettuce.start();
		lettuce.join();
		awaitNonNull(answeredOn);
		assertThat(answeredOn.get()).startsWith("parallel");

		AtomicReference<String> failedOn = new AtomicReference<>();
		this.guard.protect(Mono.never()).subscribe(value -> { }, error -> failedOn.set(Thread.currentThread().getName()));
		awaitNonNull(failedOn);
		assertThat(failedOn.get()).startsWith("parallel");
	}

	/**
	 * A thread blocked on the decision (Server MVC) is woken by the reply's own thread: a hop through a
	 * scheduler first would cost a second thread wake-up per request.
	 */
	@Test
	void aDecisionMarkedAnsweredWhereRepliedIsCompletedOnTheReplysThread() throws InterruptedException {
		// bounds far above the thread's start: under a loaded CPU the 150 ms stall of the others failed the decision
		try (RedisGuard patient = new RedisGuard(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofHours(1))) {
			AtomicReference<String> answeredOn = new AtomicReference<>();
			Sinks.One<String> redis = Sinks.one();
			RedisGuard.answeredWhereReplied(patient.protect(redis.asMono()))
				.subscribe(value -> answeredOn.set(Thread.currentThread().getName()),
						error -> answeredOn.set("failed: " + error));
			Thread lettuce = new Thread(() -> redis.tryEmitValue("reply"), "lettuce-epollEventLoop-stand-in");
			lettuce.start();
			lettuce.join();
			awaitNonNull(answeredOn);
			assertThat(answeredOn.get()).isEqualTo("lettuce-epollEventLoop-stand-in");
			assertThat(patient.inFlight()).isZero();
		}
	}

	@Test
	void beyondTheMostInFlightDecisionsFailAtOnceAndSendNothing() {
		RedisGuard small = new RedisGuard(TIMEOUT, STALL, Duration.ofHours(1), 3);
		try {
			Disposable waiting = Flux.range(0, 3).flatMap(i -> small.protect(lazyCall())).subscribe(v -> { }, e -> { });
			assertThat(small.inFlight()).isEqualTo(3);
			AtomicReference<Throwable> error = new AtomicReference<>();
			long waited = millisOf(() -> small.protect(lazyCall()).onErrorResume(e -> {
				error.set(e);
				return Mono.empty();
			}).block(Duration.ofSeconds(5)));
			assertThat(waited).isLessThan(TICK.toMillis());
			assertThat(RedisGuard.isShed(error.get())).isTrue();
			assertThat(this.sent.get()).isEqualTo(3);
			assertThat(small.shed()).isEqualTo(1);
			waiting.dispose();
			// their commands may be written already: Redis would run them on coming back, so they keep their places
			assertThat(small.inFlight()).as("cancelled, no reply seen").isEqualTo(3);
			assertThat(outcomeOf(small.protect(Mono.just("answered")))).isInstanceOf(TimeoutException.class);
			Mono<String> answeredProbe = Mono.fromSupplier(() -> "1");
			assertThat(outcomeOf(small.protect(RedisGuard.ONE_NODE, Mono.just("answered"), answeredProbe)))
				.as("shed, and a probe sent in its stead").isInstanceOf(TimeoutException.class);
			assertThat(small.trials()).isEqualTo(1);
			assertThat(small.inFlight()).as("Redis answered a call sent after them: it is past their commands")
				.isZero();
			assertThat(outcomeOf(small.protect(Mono.just("answered")))).isEqualTo("answered");
		}
		finally {
			small.close();
		}
	}

	/**
	 * A decision that waited out the timeout is answered by the fail-mode, but its command, written already,
	 * runs when a frozen Redis thaws: its place is kept until Redis answers something sent after it. Given
	 * back at the timeout, it let another decision be written in its stead every 600 ms for as long as the
	 * watchdog did not see the stall (event loops too busy to show they are free, a held-up watchdog), and a CI
	 * run had Redis run 2,077 scripts on thawing where the cap and the trials allowed 2,065.
	 */
	@Test
	void whatWaitsOnAFrozenRedisStaysWithinTheCapWhenOnlyTheTimeoutEndsTheWaits() {
		try (RedisGuard small = new RedisGuard(TIMEOUT, STALL, Duration.ofHours(1), 3)) {
			small.beforeTick = () -> sleep(60_000);
			long end = System.nanoTime() + TIMEOUT.multipliedBy(4).toNanos();
			AtomicInteger timedOut = new AtomicInteger();
			while (System.nanoTime() < end) {
				small.protect(lazyCall()).subscribe(value -> { }, error -> {
					if (!RedisGuard.failedAtOnce(error)) {
						timedOut.incrementAndGet();
					}
				});
				sleep(20);
			}
			assertThat(small.isStalled()).as("the watchdog never saw the stall").isFalse();
			assertThat(timedOut.get()).as("decisions ended by their timeout").isGreaterThanOrEqualTo(3);
			assertThat(this.sent).as("commands written to the frozen Redis").hasValue(3);
			assertThat(small.inFlight()).isEqualTo(3);
		}
	}

	private static void awaitNonNull(AtomicReference<?> value) {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (value.get() == null && System.nanoTime() < deadline) {
			sleep(1);
		}
		assertThat(value.get()).isNotNull();
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
