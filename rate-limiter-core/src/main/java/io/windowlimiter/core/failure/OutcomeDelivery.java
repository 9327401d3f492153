package io.windowlimiter.core.failure;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import io.netty.util.concurrent.EventExecutor;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Where the guard completes a call and runs its timer: on the Netty event loop that asked, else on a Reactor
 * scheduler, so that neither Lettuce's thread nor the watchdog runs the rest of a request.
 */
final class OutcomeDelivery {

	/** Where outcomes and timers go when the asker was no event loop. */
	private final Scheduler elsewhere = Schedulers.parallel();

	/** Runs the task after the delay on the asker's loop, else (no loop asked) on a Reactor scheduler. */
	Disposable schedule(@Nullable EventExecutor home, Runnable task, long delayNanos) {
		if (home != null) {
			try {
				io.netty.util.concurrent.ScheduledFuture<?> future = home.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
				return () -> future.cancel(false);
			}
			catch (RejectedExecutionException ex) {
				// the loop is shutting down: time it elsewhere
			}
		}
		return this.elsewhere.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Completes on the asking event loop. Left on Lettuce's thread, the rest of every request (the gateway's
	 * filters, proxying, the response) would run on the one thread that reads all Redis replies of the
	 * connection: on a cold JVM that kept replies unread for over 200 ms (measured), and under load it makes
	 * one thread do the work of all event loops. The watchdog's and the timers' failures go back the same
	 * way. An asker that was no event loop (a resolver that hopped threads) is answered on a Reactor scheduler.
	 */
	void deliver(PendingCall<?> waiting, Runnable completion) {
		if (waiting.inline) {
			completion.run();
			return;
		}
		EventExecutor loop = waiting.home;
		if (loop != null) {
			if (loop.inEventLoop()) {
				completion.run();
				return;
			}
			try {
				loop.execute(completion);
				return;
			}
			catch (RejectedExecutionException ex) {
				// the loop is shutting down: complete elsewhere rather than never
			}
		}
		this.elsewhere.schedule(completion);
	}

}
