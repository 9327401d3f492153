package io.windowlimiter.core.failure;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.util.concurrent.EventExecutor;

/**
 * Whether this JVM was free to read Redis's replies: each event loop that reads them or asks for decisions is
 * sent a probe every watchdog tick, so a loop starved of CPU (a crowded machine) or blocked is seen by its late
 * probes, and its silence is not taken for Redis's.
 */
final class LoopProbes {

	/** Redis replies are read, and requests asked, on a few event loops; more than this would be a surprise. */
	private static final int MAX_PROBED_LOOPS = 128;

	/** The event loops Redis replies were read on or decisions asked on, each with when it last ran a probe. */
	private final Map<EventExecutor, ProbedLoop> loops = new ConcurrentHashMap<>();

	/** Makes sure the loop is probed each tick. */
	void watch(EventExecutor loop) {
		if (!this.loops.containsKey(loop) && this.loops.size() < MAX_PROBED_LOOPS) {
			this.loops.putIfAbsent(loop, new ProbedLoop(loop));
		}
	}

	/** Sends each loop still running its probe (one at a time per loop); forgets loops shut down. */
	void probeAll() {
		this.loops.values().removeIf(ProbedLoop::isGone);
		this.loops.values().forEach(ProbedLoop::probe);
	}

	/**
	 * Whether every loop that reads Redis replies or asked for decisions ran a probe well after {@code since}:
	 * then it was free to write and read, and the silence is Redis's. A loop starved of CPU or busy with other
	 * work runs its probes late, and its silence is ours; only the hard timeout applies then.
	 */
	boolean freeSince(long since, long stallNanos) {
		for (ProbedLoop loop : this.loops.values()) {
			if (loop.ran - since < stallNanos / 2) {
				return false;
			}
		}
		return true;
	}

	/** An event loop that reads Redis replies or asks for decisions, probed by the watchdog to show it is free. */
	private static final class ProbedLoop {

		final EventExecutor loop;

		final AtomicBoolean queued = new AtomicBoolean();

		volatile long ran = System.nanoTime();

		ProbedLoop(EventExecutor loop) {
			this.loop = loop;
		}

		/** A terminated loop runs no probe again; kept, it would hold off stall detection for good. */
		boolean isGone() {
			return this.loop.isShuttingDown();
		}

		void probe() {
			// one probe at a time: a starved loop must not pile them up
			if (this.queued.compareAndSet(false, true)) {
				try {
					this.loop.execute(() -> {
						this.ran = System.nanoTime();
						this.queued.set(false);
					});
				}
				catch (RejectedExecutionException ex) {
					this.queued.set(false);
				}
			}
		}

	}

}
