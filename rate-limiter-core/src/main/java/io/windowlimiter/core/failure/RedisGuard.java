package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisCommandExecutionException;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Bounds every Redis decision without mistaking a busy Redis for a gone one.
 *
 * <p>A fixed short timeout cannot tell the two apart: on a cold or busy JVM a healthy Redis can take
 * longer than any timeout short enough to bound a request, and its fail-mode answers then let bursts
 * through (measured: 200 of 200 past a limit of 50 on a freshly started gateway with 100 ms). So the
 * guard watches whether Redis makes <em>progress</em>: a decision counts as hanging only when Redis
 * has answered nothing at all since it was sent, for {@code stallTimeout}. Under load Redis keeps
 * answering, so no decision is given up; when Redis freezes, dies without closing the connection or
 * queues commands while reconnecting, every decision waiting on it is failed after
 * {@code stallTimeout}. Then the guard is <em>stalled</em>: decisions fail at once, and one trial at a
 * time, at most one per {@code stallTimeout}, asks whether Redis answers again; its answer (any reply from
 * Redis) ends the stall. Given a probe (a call that counts nothing), the trial sends only the probe, on its
 * own, and the decision that set it off fails at once like the others: no request waits on a Redis known
 * to hang, and what a frozen Redis runs on thawing charges nobody. Nothing is sent for a decision that
 * fails at once: the call must be lazy (create its command on subscription), and a call given up is
 * cancelled, which drops its command if it was not written yet.
 *
 * <p>{@code timeout} is the hard bound of every decision, counted from when the guard got it, whatever
 * happens to the watchdog: each decision has a timer of its own, on the event loop that asked. At most
 * {@code maxInFlight} decisions wait at once on each Redis node (one for a standalone Redis, each master of a
 * cluster); beyond that a decision fails at once (it is {@linkplain #isShed shed}), so no outage and no load
 * makes the pending decisions, or the commands queued for Redis, grow past that bound, and a frozen master
 * cannot take the room of the others. A decision given up (timed out, or its asker gone) keeps its place until
 * Redis answers something sent after it: its command may be written already, and a frozen Redis runs it on
 * thawing. So the bound holds for what Redis runs when it comes back also when only the timeouts, not the
 * watchdog, end the waits; a node whose every place is so kept is sent its probe, as a stalled one is.
 *
 * <p>Told the connections' state and the cluster's masters ({@link #follow}), it takes a node whose connection is
 * down (closed, Lettuce reconnecting and queueing) as stalled at once, without waiting the stall timeout, and
 * forgets a node that is no longer a master serving slots (failed over while stalled, it would never answer as
 * one again). A call made within a {@link RedisBudget} waits at most what is left of it: the Redis calls made
 * for one answer share {@code timeout} in all. A given-up decision whose command may still run can carry what
 * undoes it (the release of the concurrency slots its script takes), sent once the node has answered a later
 * call; and a call the node could not take (a release, a settle) can be kept to send then too
 * ({@link #sendWhenAnswering}).
 *
 * <p>One watchdog thread applies the stall rule every quarter of the shorter bound. Silence counts
 * against Redis only while this JVM could have read a reply and written the request: a tick that comes
 * late means the JVM was paused (GC), so the time before it is not counted; and each event loop that reads
 * Redis replies or asks for decisions is sent a probe every tick, so a loop starved of CPU (a crowded
 * machine) or blocked is seen by its late probes, and its silence is not taken for Redis's.
 *
 * <p>Every outcome is handed back to the Netty event loop that asked (to a Reactor scheduler when the asker
 * was no event loop), so that neither Lettuce's thread nor the watchdog runs the rest of a request. A
 * decision marked {@link #answeredWhereReplied} is completed where its reply arrives instead: its asker is a
 * thread blocked waiting for it (Server MVC), so a hop through a scheduler would only add a wake-up.
 *
 * <p>Failures are counted and logged at most once per {@code logInterval}; entering and leaving a
 * stall is always logged.
 *
 * <p>This class admits each call (the budget, a stalled or down node, the bound per node) and ends it (an
 * outcome, its timer, its asker leaving); the jobs around it have classes of their own: {@code GuardBounds}
 * (the timeouts and the bound per node), {@code GuardedNodes} and {@code NodeProgress} (each node's progress,
 * places and kept calls), {@code StallWatch} (replies, trials and the watchdog's stall rule), {@code LoopProbes}
 * (whether the event loops were free), {@code KeptCalls} (undos and calls sent once a node answers),
 * {@code OutcomeDelivery} (where an outcome is completed) and {@code GuardReports} (counts and logs).
 */
public final class RedisGuard implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisGuard.class);

	/** The node of a standalone Redis (or Sentinel's master): decisions that name none. */
	public static final Object ONE_NODE = "";

	/**
	 * The default bound on decisions waiting at once on one Redis node. A healthy Redis keeps a few hundred at most in flight
	 * (rate times round trip: 50,000 a second at 2 ms is 100), so this sheds nothing in health; in an outage it
	 * bounds the heap held for pending decisions (about 1 KB each) and what Redis runs when it returns (2,000
	 * scripts of some 20 to 50 us each, under 100 ms of Redis time).
	 */
	public static final int DEFAULT_MAX_IN_FLIGHT = 2_000;

	/** The Reactor context key of {@link #answeredWhereReplied}. */
	private static final Object ANSWER_WHERE_REPLIED = new Object();

	private final GuardBounds bounds;

	private final GuardReports reports;

	private final KeptCalls kept = new KeptCalls();

	private final LoopProbes loops = new LoopProbes();

	private final OutcomeDelivery delivery = new OutcomeDelivery();

	private final GuardedNodes nodes;

	private final StallWatch watch;

	private final AtomicLong shed = new AtomicLong();

	private final ScheduledExecutorService watchdog;

	/** Run before each watchdog tick: tests delay the watchdog with it. */
	volatile Runnable beforeTick = () -> {
	};

	/**
	 * @param timeout the longest any decision waits
	 * @param stallTimeout how long Redis may answer nothing before the decisions waiting on it fail
	 * @param logInterval the shortest time between two log lines about failed decisions
	 */
	public RedisGuard(Duration timeout, Duration stallTimeout, Duration logInterval) {
		this(timeout, stallTimeout, logInterval, DEFAULT_MAX_IN_FLIGHT);
	}

	/**
	 * @param timeout the longest any decision waits
	 * @param stallTimeout how long Redis may answer nothing before the decisions waiting on it fail
	 * @param logInterval the shortest time between two log lines about failed decisions
	 * @param maxInFlight the most decisions waiting at once on one Redis node; more fail at once
	 */
	public RedisGuard(Duration timeout, Duration stallTimeout, Duration logInterval, int maxInFlight) {
		this.bounds = new GuardBounds(timeout, stallTimeout, maxInFlight);
		this.reports = new GuardReports(logInterval);
		this.nodes = new GuardedNodes(this.reports, this.kept);
		this.watch = new StallWatch(this.bounds, this.nodes, this.loops, this.kept, this.reports, this.delivery);
		this.watchdog = Executors.newSingleThreadScheduledExecutor(task -> {
			Thread thread = new Thread(task, "window-rate-limiter-watchdog");
			thread.setDaemon(true);
			return thread;
		});
		long tick = this.bounds.tickNanos;
		this.watchdog.scheduleAtFixedRate(this::tick, tick, tick, TimeUnit.NANOSECONDS);
	}

	/**
	 * The call, failed with a {@link TimeoutException} when Redis hangs or it waits past the timeout. The call
	 * must be lazy: it is subscribed only when the decision goes to Redis, and cancelled when given up.
	 */
	public <T> Mono<T> protect(Mono<T> call) {
		return protect(ONE_NODE, call);
	}

	/**
	 * The call, to the given Redis node (on a cluster, the master of the keys' slot), failed with a
	 * {@link TimeoutException} when that node hangs or it waits past the timeout. The node's silence counts
	 * only against decisions sent to it: one frozen master leaves the others' clients decided by Redis.
	 * @param node what tells the node apart, e.g. its id; equal for decisions on the same node
	 */
	public <T> Mono<T> protect(Object node, Mono<T> call) {
		return protect(this.nodes.of(node), call, null, null);
	}

	/**
	 * As {@link #protect(Object, Mono)}, where the trials of a stalled node send {@code trialProbe}, a lazy call
	 * that changes nothing in Redis, on its own, and the decision that set a trial off fails at once as the
	 * others do. A frozen Redis runs what was written to it when it thaws: the trials' probes then charge no
	 * client, where decisions sent as trials would charge requests the fail-mode had answered long before; and
	 * no request waits for a trial (a trial decision waited up to the timeout, the slowest answers of an outage).
	 */
	public <T> Mono<T> protect(Object node, Mono<T> call, Mono<?> trialProbe) {
		return protect(this.nodes.of(node), call, (Mono<?>) trialProbe, null);
	}

	/**
	 * As {@link #protect(Object, Mono, Mono)}, for a call whose effect must not outlive a decision given up:
	 * {@code ifGivenUp} undoes what the call's command may have done in Redis (a decision's script taking
	 * concurrency slots for a request the fail-mode answered). It is subscribed at most once, and only if the
	 * decision was given up (its timeout, a stall, its asker gone) while its command may have been written:
	 * once the node has answered a call sent after it (Redis runs one connection's commands in order, so the
	 * given-up command has run by then, or never will), at once if the given-up call's own reply comes; never
	 * while the node answers nothing, so nothing waits behind a stall. Kept per node as the given-up places are,
	 * so at most {@code maxInFlight} per node; while any is kept the watchdog sends the node a trial probe (at
	 * most one per stall timeout), so they go soon after the node answers again, with or without traffic.
	 * @param ifGivenUp lazy, bounded by this guard itself (a call through {@link #protect}), never failing;
	 * undoing what never ran must be harmless (it is sent whether or not the command was written)
	 */
	public <T> Mono<T> protect(Object node, Mono<T> call, Mono<?> trialProbe, Mono<?> ifGivenUp) {
		return protect(this.nodes.of(node), call, (Mono<?>) trialProbe, ifGivenUp);
	}

	/**
	 * Keeps a call that the node could not take (it was stalled or down, too many waited, the call timed out) to
	 * subscribe once, when the node has answered a call sent after now: a release of concurrency slots or a settle
	 * that would otherwise be dropped, leaving the client's slots held or its reservation charged for the whole
	 * window. Kept per node, at most {@code maxInFlight} at once; while any is kept the watchdog sends the node a
	 * trial probe (at most one per stall timeout), so they go soon after it answers again, with or without traffic.
	 * Never sent twice by the guard: if the node cannot take it then either, it is the call's to count as dropped.
	 * A call Redis itself refused (an error reply) is not kept: it would be refused again.
	 * @param failure why the call failed
	 * @param node the node it went to, as named to {@link #protect(Object, Mono)}
	 * @param call what to send then: lazy, bounded by this guard itself (a call through {@link #protect}), never
	 * failing, and idempotent (it may run after the failed call's own command, written before Redis froze)
	 * @param trialProbe a call that changes nothing on the node, for the watchdog's trials while it is kept
	 * @return whether it was kept; false when Redis refused it or the node keeps {@code maxInFlight} already
	 */
	public boolean sendWhenAnswering(Throwable failure, Object node, Mono<?> call, Mono<?> trialProbe) {
		if (isReply(failure)) {
			return false;
		}
		return this.kept.keep(this.nodes.of(node), call, trialProbe, this.bounds.maxInFlight);
	}

	/** How many calls were kept since start to send once Redis answered (see {@link #sendWhenAnswering}). */
	public long keptForLater() {
		return this.kept.keptForLater();
	}

	/**
	 * The guard's admission: fails the call at once, sending nothing, when the answer's budget is spent, the node
	 * is down or stalled (bar one trial), or {@code maxInFlight} calls wait on it already; else sends it, timed,
	 * and watched until its sink is done.
	 */
	private <T> Mono<T> protect(NodeProgress progress, Mono<T> call, @Nullable Mono<?> trialProbe,
			@Nullable Mono<?> ifGivenUp) {
		return Mono.<T>create(sink -> {
			long start = System.nanoTime();
			RedisBudget budget = RedisBudget.in(sink.contextView());
			long bound = this.bounds.boundOf(budget);
			if (bound <= 0) {
				// the answer has waited all it may for Redis: this call would only make it later
				fail(sink, new RedisBudgetSpentException());
				return;
			}
			if (this.nodes.isDown(progress, start)) {
				fail(sink, new RedisStalledException());
				return;
			}
			boolean isTrial = progress.stalled;
			if (isTrial && (start - progress.nextTrial < 0 || !progress.trial.compareAndSet(false, true))) {
				fail(sink, new RedisStalledException());
				return;
			}
			if (isTrial && trialProbe != null) {
				this.watch.sendTrial(progress, trialProbe);
				fail(sink, new RedisStalledException());
				return;
			}
			if (!progress.admit(this.bounds.maxInFlight)) {
				if (isTrial) {
					progress.trial.set(false);
				}
				else if (trialProbe != null && progress.keepsGivenUp() && start - progress.nextTrial >= 0
						&& progress.trial.compareAndSet(false, true)) {
					// places kept for given-up decisions come back only with a reply: ask for one
					this.watch.sendTrial(progress, trialProbe);
				}
				this.shed.incrementAndGet();
				fail(sink, new RedisShedException(this.bounds.maxInFlight));
				return;
			}
			EventExecutor home = ThreadExecutorMap.currentExecutor();
			if (home != null) {
				this.loops.watch(home);
			}
			boolean inline = home == null && sink.contextView().hasKey(ANSWER_WHERE_REPLIED);
			PendingCall<T> waiting = new PendingCall<>(sink, start, bound, budget, isTrial, home, inline, progress,
					progress.sent.incrementAndGet(), ifGivenUp, trialProbe);
			this.watch.add(waiting);
			sink.onDispose(() -> release(waiting));
			waiting.timer = this.delivery.schedule(home, () -> timeOut(waiting), bound);
			Disposable upstream = call.subscribe(value -> {
				waiting.ended = true;
				this.watch.replied(progress, waiting.sent);
				if (waiting.finish()) {
					this.delivery.deliver(waiting, () -> sink.success(value));
				}
				else {
					// given up, and yet it ran: what it did is undone now, the node answers
					this.kept.undo(waiting);
				}
			}, error -> {
				waiting.ended = true;
				if (isReply(error)) {
					// Redis refused the command: it changed nothing, there is nothing to undo
					waiting.undone.set(true);
					this.watch.replied(progress, waiting.sent);
				}
				if (waiting.finish()) {
					this.delivery.deliver(waiting, () -> fail(sink, error));
				}
			}, () -> {
				waiting.ended = true;
				// after a value this finds the decision finished: its reply was counted already
				if (waiting.finish()) {
					this.watch.replied(progress, waiting.sent);
					this.delivery.deliver(waiting, sink::success);
				}
			});
			waiting.upstream = upstream;
			if (waiting.get()) {
				// answered or abandoned while subscribing: nothing more to wait for
				upstream.dispose();
			}
		});
	}

	/**
	 * The decision, marked to be completed on the thread its outcome arrives on (Lettuce's, the timer's) when
	 * its asker is no event loop: for a subscriber that only wakes a thread blocked on the decision, where a
	 * scheduler hop costs a thread wake-up per request and adds its latency (measured on Server MVC, issue 25).
	 * The subscriber must do no more than hand the outcome over.
	 */
	public static <T> Mono<T> answeredWhereReplied(Mono<T> decision) {
		return decision.contextWrite(context -> context.put(ANSWER_WHERE_REPLIED, Boolean.TRUE));
	}

	/** How many decisions failed since start. */
	public long failures() {
		return this.reports.failures();
	}

	/** How many trial probes a stalled guard sent since start (each a script that counts nothing). */
	public long trials() {
		return this.watch.trials();
	}

	/** How many undos of given-up calls were sent since start (see {@link #protect(Object, Mono, Mono, Mono)}). */
	public long undos() {
		return this.kept.undos();
	}

	/** How many decisions failed at once since start because {@code maxInFlight} decisions were waiting. */
	public long shed() {
		return this.shed.get();
	}

	/** How many decisions wait on Redis now, on all its nodes, with those given up that Redis may still run. */
	public int inFlight() {
		return this.nodes.inFlight();
	}

	/** Whether Redis (some node of it) is taken to be hanging: its decisions fail at once, bar one trial at a time. */
	public boolean isStalled() {
		return this.nodes.anyStalled();
	}

	/**
	 * Has the guard follow the connections' state and the cluster's masters: a node whose connection is down is
	 * taken as stalled at once, and a node no longer a master is forgotten.
	 */
	public void follow(Topology topology) {
		this.nodes.follow(topology);
		topology.whenDisconnected(this::checkNow);
	}

	/**
	 * Runs the watchdog's check at once, on its thread: told a connection closed, the decisions waiting on it fail
	 * now. Those Lettuce keeps to send again after reconnecting (their write failed on the dying connection)
	 * would otherwise wait for the next tick, up to a quarter of the stall timeout, on top of whatever else
	 * slows the answer (measured: a fresh Server MVC instance whose Redis died under its first burst answered
	 * the requests settling then 100 to 250 ms after the others).
	 */
	private void checkNow() {
		try {
			this.watchdog.execute(this::tick);
		}
		catch (RejectedExecutionException ex) {
			// closed: nothing waits any more
		}
	}

	/** A guard for one answer's Redis calls: {@code redis-timeout} in all (see {@link RedisBudget}). */
	public RedisBudget newBudget() {
		return this.bounds.newBudget();
	}

	/** Whether the error is a decision failed at once, with nothing sent to Redis (stalled, shed, no budget left). */
	public static boolean failedAtOnce(Throwable error) {
		return error instanceof RedisStalledException || error instanceof RedisShedException
				|| error instanceof RedisBudgetSpentException;
	}

	/** What the guard is told of the Redis nodes it guards. */
	public interface Topology {

		/** Tells nothing: the stall rule alone decides. */
		Topology UNKNOWN = new Topology() {

			@Override
			public boolean isDisconnected(Object node) {
				return false;
			}

			@Override
			public @Nullable Set<Object> masters() {
				return null;
			}

		};

		/** Whether the connection to the node is known to be down (closed, reconnecting). */
		boolean isDisconnected(Object node);

		/** The masters decisions may go to now (their ids, as decisions name them); null when unknown or not a cluster. */
		@Nullable Set<Object> masters();

		/**
		 * Has {@code check} run whenever a connection to Redis goes down, so that the decisions waiting on it fail
		 * then, not at the watchdog's next tick. A topology that cannot tell does nothing.
		 */
		default void whenDisconnected(Runnable check) {
		}

	}

	/** Whether the error is a decision shed because too many were waiting on Redis. */
	public static boolean isShed(Throwable error) {
		return error instanceof RedisShedException;
	}

	@Override
	public void close() {
		this.watchdog.shutdownNow();
	}

	/** A Redis error reply (as opposed to a connection failure) shows Redis is there and answering. */
	static boolean isReply(Throwable error) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisCommandExecutionException) {
				return true;
			}
		}
		return false;
	}

	/** Once per decision, when its sink is done (answered, failed or cancelled). */
	private void release(PendingCall<?> waiting) {
		if (waiting.finish()) {
			// its asker left (a client gone, a wait given up) before any outcome: given up
			waiting.givenUp = true;
		}
		this.watch.remove(waiting);
		boolean undo = waiting.givenUp && waiting.ifGivenUp != null;
		if (waiting.ended) {
			waiting.node.inFlight.decrementAndGet();
			if (undo) {
				// it ended after it was given up: ran (undone now, the node answers) or was refused (nothing to undo)
				this.kept.undo(waiting);
			}
		}
		else {
			waiting.node.keepForGivenUp(waiting.sent, undo ? waiting : null, waiting.trialProbe);
		}
		if (waiting.trial) {
			waiting.node.nextTrial = System.nanoTime() + this.bounds.stallNanos;
			waiting.node.trial.set(false);
		}
		Disposable timer = waiting.timer;
		if (timer != null) {
			timer.dispose();
		}
		Disposable upstream = waiting.upstream;
		if (upstream != null) {
			// cancels the command: not written yet, it never will be
			upstream.dispose();
		}
	}

	private void timeOut(PendingCall<?> waiting) {
		if (waiting.finish()) {
			waiting.givenUp = true;
			TimeoutException error = new TimeoutException(
					"Redis did not answer within " + Duration.ofNanos(waiting.bound).toMillis() + " ms");
			this.delivery.deliver(waiting, () -> fail(waiting.sink, error));
		}
	}

	private void tick() {
		try {
			this.beforeTick.run();
			this.watch.check();
		}
		catch (Throwable ex) {
			// a watchdog that dies ends stall detection for good: log and go on
			logger.error("Rate-limit watchdog failed a tick; it goes on", ex);
		}
	}

	private void fail(MonoSink<?> sink, Throwable error) {
		this.reports.fail(sink, error);
	}

}
