package io.windowlimiter.mvc;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.windowlimiter.core.failure.RedisGuard;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

/**
 * A request thread's wait for the core's answer (a decision, a settle), at most a hard bound, with no timer
 * of its own. The guard already ends every decision within {@code redis-timeout}; this bound is the backstop
 * for a guard whose timer did not run. A timed wait would arm a timer per request for that: on a virtual
 * thread (JDK 25) a timed park schedules and cancels a task on the ForkJoinPool's delay scheduler and wakes its
 * thread twice, measured at about 30 us of CPU per request on 2 cores (issue 25). So the thread waits untimed,
 * and one shared daemon thread, every {@link #TICK}, ends the waits due: a wait is due a tick before its bound,
 * so it ends between the bound less a tick and the bound. The answer is completed where Redis's reply arrives
 * (no scheduler hop, see {@link RedisGuard#answeredWhereReplied}): the waiting thread is woken once.
 */
final class BoundedWait {

	/** How often waits are checked against their bound: how much before it a wait may end. */
	static final Duration TICK = Duration.ofMillis(25);

	private static final Log logger = LogFactory.getLog(BoundedWait.class);

	private static final Set<Waiting> waiting = ConcurrentHashMap.newKeySet();

	private static final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(task -> {
		Thread thread = new Thread(task, "window-rate-limit-mvc-wait-bound");
		thread.setDaemon(true);
		return thread;
	});

	static {
		sweeper.scheduleAtFixedRate(BoundedWait::endOverdue, TICK.toNanos(), TICK.toNanos(), TimeUnit.NANOSECONDS);
	}

	/** The bound less a tick: a wait due is ended by the next tick, within the bound. */
	private final long dueNanos;

	/** @param bound the longest a thread waits, at least two ticks */
	BoundedWait(Duration bound) {
		if (bound.compareTo(TICK.multipliedBy(2)) < 0) {
			throw new IllegalArgumentException("A wait bound of " + bound + " is shorter than two ticks of " + TICK);
		}
		this.dueNanos = bound.minus(TICK).toNanos();
	}

	/**
	 * The answer, waited for at most the bound; past it the answer is cancelled (its Redis call disposed) and a
	 * {@link TimeoutException} thrown.
	 * @throws ExecutionException the answer failed
	 * @throws InterruptedException the thread was interrupted while waiting; the answer is cancelled
	 */
	<T> T await(Mono<T> answer) throws TimeoutException, ExecutionException, InterruptedException {
		CompletableFuture<T> future = RedisGuard.answeredWhereReplied(answer).toFuture();
		if (future.isDone()) {
			// answered without Redis (a listed client, the deny cache, a fail-mode): nothing to time
			return get(future);
		}
		Waiting wait = new Waiting(future, System.nanoTime() + this.dueNanos);
		waiting.add(wait);
		try {
			return get(future);
		}
		catch (TimeoutException | InterruptedException ex) {
			future.cancel(true);
			throw ex;
		}
		finally {
			waiting.remove(wait);
		}
	}

	private static <T> T get(CompletableFuture<T> future)
			throws TimeoutException, ExecutionException, InterruptedException {
		try {
			return future.get();
		}
		catch (CancellationException ex) {
			// only the sweeper cancels a future still waited for
			throw new TimeoutException();
		}
	}

	private static void endOverdue() {
		long now = System.nanoTime();
		for (Waiting wait : waiting) {
			if (now - wait.deadline >= 0) {
				try {
					// cancel, not completeExceptionally: Reactor disposes the call only on a successful cancel
					wait.future.cancel(true);
				}
				catch (RuntimeException ex) {
					// a task that throws is never run again: the bound must outlive a failed cancel
					logger.warn("Cancelling an overdue rate-limit wait failed", ex);
				}
			}
		}
	}

	/** One thread's wait (identity equality: two waits may have the same deadline). */
	private static final class Waiting {

		final CompletableFuture<?> future;

		final long deadline;

		Waiting(CompletableFuture<?> future, long deadline) {
			this.future = future;
			this.deadline = deadline;
		}

	}

}
