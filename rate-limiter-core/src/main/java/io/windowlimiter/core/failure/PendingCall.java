package io.windowlimiter.core.failure;

import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.util.concurrent.EventExecutor;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/** A decision waiting on Redis; finished once, by its answer, its timer, the watchdog or its subscriber leaving. */
final class PendingCall<T> extends AtomicBoolean {

	final MonoSink<T> sink;

	final long start;

	final boolean trial;

	/** The Netty event loop that asked, if any: the request goes on there. */
	final @Nullable EventExecutor home;

	/** Completed where the outcome arrives: see {@link RedisGuard#answeredWhereReplied}. */
	final boolean inline;

	final NodeProgress node;

	/** Its number among the calls sent to the node. */
	final long sent;

	/** Whether the call ended (a reply, an error): its command then is no longer Redis's to run. */
	volatile boolean ended;

	volatile @Nullable Disposable upstream;

	volatile @Nullable Disposable timer;

	/** Whether it was given up (timed out, stalled, its asker gone) rather than answered. */
	volatile boolean givenUp;

	/** What undoes its command's effect if it was given up; null when nothing needs undoing. */
	final @Nullable Mono<?> ifGivenUp;

	/** Set once {@link #ifGivenUp} was sent, or is known to have nothing to undo. */
	final AtomicBoolean undone = new AtomicBoolean();

	/** A call to its node that changes nothing: the watchdog's trial while its place is kept. */
	final @Nullable Mono<?> trialProbe;

	/** The longest it waits: the guard's timeout, or less when the answer's budget has less left. */
	final long bound;

	/** The answer's budget it spends from; null for a call bounded by the timeout alone. */
	final @Nullable RedisBudget budget;

	PendingCall(MonoSink<T> sink, long start, long bound, @Nullable RedisBudget budget, boolean trial,
			@Nullable EventExecutor home, boolean inline, NodeProgress node, long sent, @Nullable Mono<?> ifGivenUp,
			@Nullable Mono<?> trialProbe) {
		this.bound = bound;
		this.budget = budget;
		this.ifGivenUp = ifGivenUp;
		this.trialProbe = trialProbe;
		this.node = node;
		this.sent = sent;
		this.inline = inline;
		this.sink = sink;
		this.start = start;
		this.trial = trial;
		this.home = home;
	}

	/**
	 * Marks the outcome decided, once; the wait is spent from the answer's budget then, before the outcome is
	 * delivered: the asker's next call (the next filter's decision) may start as it is.
	 */
	boolean finish() {
		if (!compareAndSet(false, true)) {
			return false;
		}
		RedisBudget budget = this.budget;
		if (budget != null) {
			budget.spend(System.nanoTime() - this.start);
		}
		return true;
	}

}
