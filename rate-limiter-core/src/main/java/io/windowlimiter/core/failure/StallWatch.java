package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;

/**
 * Whether Redis makes progress, as the guard sees it: every reply to a call (which ends a node's stall and lets
 * the given-up and kept calls go), the trials that ask a stalled node with a probe, and the watchdog's stall
 * rule, run each tick over the calls waiting: a call counts as hanging only when its node has answered nothing
 * since it was sent, for {@code stallTimeout}, while this JVM was free to read the reply.
 */
final class StallWatch {

	private final GuardBounds bounds;

	private final GuardedNodes nodes;

	private final LoopProbes loops;

	private final KeptCalls kept;

	private final GuardReports reports;

	private final OutcomeDelivery delivery;

	/** The calls waiting on Redis now. */
	private final Set<PendingCall<?>> pending = ConcurrentHashMap.newKeySet();

	/** When the watchdog last found this JVM paused; waiting before it is not Redis's doing. */
	private volatile long pauseEnd = System.nanoTime();

	private long lastTick = System.nanoTime();

	private final AtomicLong trials = new AtomicLong();

	StallWatch(GuardBounds bounds, GuardedNodes nodes, LoopProbes loops, KeptCalls kept, GuardReports reports,
			OutcomeDelivery delivery) {
		this.bounds = bounds;
		this.nodes = nodes;
		this.loops = loops;
		this.kept = kept;
		this.reports = reports;
		this.delivery = delivery;
	}

	/** Watches a call from when it is sent until its sink is done. */
	void add(PendingCall<?> waiting) {
		this.pending.add(waiting);
	}

	/** Stops watching a call: its sink is done. */
	void remove(PendingCall<?> waiting) {
		this.pending.remove(waiting);
	}

	/** How many trial probes were sent to stalled nodes since start. */
	long trials() {
		return this.trials.get();
	}

	/** A reply from the node to the call it was sent as {@code sent}: Redis is past every call sent before. */
	void replied(NodeProgress node, long sent) {
		node.lastReply = System.nanoTime();
		List<PendingCall<?>> toUndo = node.answered(sent);
		EventExecutor loop = ThreadExecutorMap.currentExecutor();
		if (loop != null) {
			this.loops.watch(loop);
		}
		if (node.stalled) {
			node.stalled = false;
			this.reports.report("Redis answers again" + node.described() + ": rate-limit decisions go to Redis");
		}
		// after the stall has ended: the undos and kept calls go through the guard, which refuses calls to a
		// stalled node
		toUndo.forEach(this.kept::undo);
		this.kept.sendAll(node.dueLater(sent));
	}

	/**
	 * Sends a stalled node's trial probe, no request waiting on it: its answer ends the stall; with none
	 * within the timeout it is given up (a command not written yet never will be) and the next trial may go
	 * a stall timeout later.
	 */
	void sendTrial(NodeProgress node, Mono<?> probe) {
		this.trials.incrementAndGet();
		long sentAs = node.sent.incrementAndGet();
		AtomicBoolean over = new AtomicBoolean();
		Disposable.Swap sent = Disposables.swap();
		Runnable end = () -> {
			if (over.compareAndSet(false, true)) {
				node.nextTrial = System.nanoTime() + this.bounds.stallNanos;
				node.trial.set(false);
			}
		};
		Disposable timer = this.delivery.schedule(null, () -> {
			end.run();
			sent.dispose();
		}, this.bounds.timeoutNanos);
		sent.replace(probe.subscribe(value -> replied(node, sentAs), error -> {
			if (RedisGuard.isReply(error)) {
				replied(node, sentAs);
			}
			end.run();
			timer.dispose();
		}, () -> {
			replied(node, sentAs);
			end.run();
			timer.dispose();
		}));
	}

	/**
	 * The watchdog's tick: a tick that comes late means the JVM was paused (GC), so the time before it is not
	 * counted; then each node's connection and kept calls, then each waiting call's silence and hard bound.
	 */
	void check() {
		long now = System.nanoTime();
		if (now - this.lastTick > 3 * this.bounds.tickNanos) {
			this.pauseEnd = now;
		}
		this.lastTick = now;
		this.loops.probeAll();
		this.nodes.retireGone();
		Set<NodeProgress> down = new HashSet<>();
		for (NodeProgress node : this.nodes.all()) {
			if (this.nodes.isDown(node, now)) {
				down.add(node);
			}
			else {
				Mono<?> probe = node.probeWhileKept();
				if (probe != null && now - node.nextTrial >= 0 && node.trial.compareAndSet(false, true)) {
					// places (and undos) kept for given-up calls come back with a reply to a later call: ask for one,
					// also when no request comes
					sendTrial(node, probe);
				}
			}
		}
		long pauseEnd = this.pauseEnd;
		for (PendingCall<?> waiting : this.pending) {
			if (waiting.get()) {
				continue;
			}
			NodeProgress node = waiting.node;
			long lastReply = node.lastReply;
			// a pause excuses silence, never the hard bound: the timer of each decision keeps that
			long since = Math.max(waiting.start, pauseEnd);
			// a connection known to be down answers nothing before it is back: no use waiting the stall timeout
			long stall = this.bounds.stallNanos;
			boolean hanging = down.contains(node)
					|| lastReply - since < 0 && now - since >= stall && this.loops.freeSince(since, stall);
			boolean late = now - waiting.start >= waiting.bound;
			if (hanging && !node.stalled) {
				node.stalled = true;
				if (node.lastReply != lastReply) {
					// a reply came in meanwhile: Redis answers after all
					node.stalled = false;
					continue;
				}
				this.reports.report("Redis" + node.described() + " answered nothing for "
						+ Duration.ofNanos(now - since).toMillis() + " ms while " + this.pending.size()
						+ " decision(s) waited: routes apply their fail-mode, trying Redis with one decision at a time "
						+ "until it answers");
			}
			if ((hanging || late) && waiting.finish()) {
				waiting.givenUp = true;
				TimeoutException error = new TimeoutException(down.contains(node) ? "The connection to Redis is down"
						: hanging ? "Redis answered nothing for " + Duration.ofNanos(stall).toMillis() + " ms"
						: "Redis did not answer within " + Duration.ofNanos(waiting.bound).toMillis() + " ms");
				this.delivery.deliver(waiting, () -> this.reports.fail(waiting.sink, error));
			}
		}
	}

}
