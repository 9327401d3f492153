package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisCommandExecutionException;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import io.windowlimiter.core.OccasionalLog;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

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
 */
public final class RedisGuard implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisGuard.class);

	/** Redis replies are read, and requests asked, on a few event loops; more than this would be a surprise. */
	private static final int MAX_PROBED_LOOPS = 128;

	/** The node of a standalone Redis (or Sentinel's master): decisions that name none. */
	public static final Object ONE_NODE = "";

	/** More Redis nodes than a cluster has masters; beyond, ids no longer used are dropped. */
	private static final int MAX_NODES = 1_024;

	/**
	 * The default bound on decisions waiting at once on one Redis node. A healthy Redis keeps a few hundred at most in flight
	 * (rate times round trip: 50,000 a second at 2 ms is 100), so this sheds nothing in health; in an outage it
	 * bounds the heap held for pending decisions (about 1 KB each) and what Redis runs when it returns (2,000
	 * scripts of some 20 to 50 us each, under 100 ms of Redis time).
	 */
	public static final int DEFAULT_MAX_IN_FLIGHT = 2_000;

	/** The Reactor context key of {@link #answeredWhereReplied}. */
	private static final Object ANSWER_WHERE_REPLIED = new Object();

	private final long timeoutNanos;

	private final long stallNanos;

	private final long tickNanos;

	private final int maxInFlight;

	private final Set<Pending<?>> pending = ConcurrentHashMap.newKeySet();

	/** The event loops Redis replies were read on or decisions asked on, each with when it last ran a probe. */
	private final Map<EventExecutor, ProbedLoop> loops = new ConcurrentHashMap<>();

	/** Progress of each Redis node decisions went to (one for a standalone Redis or Sentinel). */
	private final Map<Object, Node> nodes = new ConcurrentHashMap<>();

	/** When the watchdog last found this JVM paused; waiting before it is not Redis's doing. */
	private volatile long pauseEnd = System.nanoTime();

	private final AtomicLong failures = new AtomicLong();

	private final AtomicLong shed = new AtomicLong();


	private final AtomicLong trials = new AtomicLong();

	private final AtomicLong undone = new AtomicLong();

	private final AtomicLong keptForLater = new AtomicLong();

	private final AtomicLong unreported = new AtomicLong();

	/** Stalls and recoveries, written off the answering threads: one line each. */
	private final OccasionalLog reports = new OccasionalLog(RedisGuard.class, Duration.ZERO);

	/** Failed decisions, at most one line per {@code failure-log-interval}, with how many since the last. */
	private final OccasionalLog failureReports;


	private final ScheduledExecutorService watchdog;

	/** Where outcomes and timers go when the asker was no event loop. */
	private final Scheduler elsewhere = Schedulers.parallel();

	private long lastTick = System.nanoTime();

	/** What the guard knows of the connections and the cluster's masters; nothing until {@link #follow}. */
	private volatile Topology topology = Topology.UNKNOWN;

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
		if (timeout.isNegative() || timeout.isZero() || stallTimeout.isNegative() || stallTimeout.isZero()) {
			throw new IllegalArgumentException("Redis timeouts must be positive: " + timeout + ", " + stallTimeout);
		}
		if (maxInFlight < 1) {
			throw new IllegalArgumentException("The most decisions in flight must be at least 1: " + maxInFlight);
		}
		this.timeoutNanos = timeout.toNanos();
		this.stallNanos = Math.min(stallTimeout.toNanos(), this.timeoutNanos);
		this.tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), this.stallNanos / 4);
		this.failureReports = new OccasionalLog(RedisGuard.class, logInterval);
		this.maxInFlight = maxInFlight;
		this.watchdog = Executors.newSingleThreadScheduledExecutor(task -> {
			Thread thread = new Thread(task, "window-rate-limiter-watchdog");
			thread.setDaemon(true);
			return thread;
		});
		this.watchdog.scheduleAtFixedRate(this::tick, this.tickNanos, this.tickNanos, TimeUnit.NANOSECONDS);
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
		return protect(nodeOf(node), call, null, null);
	}

	/**
	 * As {@link #protect(Object, Mono)}, where the trials of a stalled node send {@code trialProbe}, a lazy call
	 * that changes nothing in Redis, on its own, and the decision that set a trial off fails at once as the
	 * others do. A frozen Redis runs what was written to it when it thaws: the trials' probes then charge no
	 * client, where decisions sent as trials would charge requests the fail-mode had answered long before; and
	 * no request waits for a trial (a trial decision waited up to the timeout, the slowest answers of an outage).
	 */
	public <T> Mono<T> protect(Object node, Mono<T> call, Mono<?> trialProbe) {
		return protect(nodeOf(node), call, (Mono<?>) trialProbe, null);
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
		return protect(nodeOf(node), call, (Mono<?>) trialProbe, ifGivenUp);
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
		Node progress = nodeOf(node);
		if (!progress.keepForLater(call, trialProbe, this.maxInFlight)) {
			return false;
		}
		this.keptForLater.incrementAndGet();
		return true;
	}

	/** How many calls were kept since start to send once Redis answered (see {@link #sendWhenAnswering}). */
	public long keptForLater() {
		return this.keptForLater.get();
	}

	private <T> Mono<T> protect(Node progress, Mono<T> call, @Nullable Mono<?> trialProbe, @Nullable Mono<?> ifGivenUp) {
		return Mono.<T>create(sink -> {
			long start = System.nanoTime();
			RedisBudget budget = RedisBudget.in(sink.contextView());
			long bound = this.timeoutNanos;
			if (budget != null) {
				bound = Math.min(bound, budget.leftNanos());
				if (bound <= 0) {
					// the answer has waited all it may for Redis: this call would only make it later
					fail(sink, new RedisBudgetSpentException());
					return;
				}
			}
			if (isDown(progress, start)) {
				fail(sink, new RedisStalledException());
				return;
			}
			boolean isTrial = progress.stalled;
			if (isTrial && (start - progress.nextTrial < 0 || !progress.trial.compareAndSet(false, true))) {
				fail(sink, new RedisStalledException());
				return;
			}
			if (isTrial && trialProbe != null) {
				sendTrial(progress, trialProbe);
				fail(sink, new RedisStalledException());
				return;
			}
			if (!progress.admit(this.maxInFlight)) {
				if (isTrial) {
					progress.trial.set(false);
				}
				else if (trialProbe != null && progress.keepsGivenUp() && start - progress.nextTrial >= 0
						&& progress.trial.compareAndSet(false, true)) {
					// places kept for given-up decisions come back only with a reply: ask for one
					sendTrial(progress, trialProbe);
				}
				this.shed.incrementAndGet();
				fail(sink, new RedisShedException(this.maxInFlight));
				return;
			}
			EventExecutor home = ThreadExecutorMap.currentExecutor();
			if (home != null) {
				probe(home);
			}
			boolean inline = home == null && sink.contextView().hasKey(ANSWER_WHERE_REPLIED);
			Pending<T> waiting = new Pending<>(sink, start, bound, budget, isTrial, home, inline, progress,
					progress.sent.incrementAndGet(), ifGivenUp, trialProbe);
			this.pending.add(waiting);
			sink.onDispose(() -> release(waiting));
			waiting.timer = schedule(home, () -> timeOut(waiting), bound);
			Disposable upstream = call.subscribe(value -> {
				waiting.ended = true;
				replied(progress, waiting.sent);
				if (waiting.finish()) {
					deliver(waiting, () -> sink.success(value));
				}
				else {
					// given up, and yet it ran: what it did is undone now, the node answers
					undo(waiting);
				}
			}, error -> {
				waiting.ended = true;
				if (isReply(error)) {
					// Redis refused the command: it changed nothing, there is nothing to undo
					waiting.undone.set(true);
					replied(progress, waiting.sent);
				}
				if (waiting.finish()) {
					deliver(waiting, () -> fail(sink, error));
				}
			}, () -> {
				waiting.ended = true;
				// after a value this finds the decision finished: its reply was counted already
				if (waiting.finish()) {
					replied(progress, waiting.sent);
					deliver(waiting, sink::success);
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
		return this.failures.get();
	}

	/** How many trial probes a stalled guard sent since start (each a script that counts nothing). */
	public long trials() {
		return this.trials.get();
	}

	/** How many undos of given-up calls were sent since start (see {@link #protect(Object, Mono, Mono, Mono)}). */
	public long undos() {
		return this.undone.get();
	}

	/** How many decisions failed at once since start because {@code maxInFlight} decisions were waiting. */
	public long shed() {
		return this.shed.get();
	}

	/** How many decisions wait on Redis now, on all its nodes, with those given up that Redis may still run. */
	public int inFlight() {
		int inFlight = 0;
		for (Node node : this.nodes.values()) {
			inFlight += node.inFlight.get();
		}
		return inFlight;
	}

	/** Whether Redis (some node of it) is taken to be hanging: its decisions fail at once, bar one trial at a time. */
	public boolean isStalled() {
		for (Node node : this.nodes.values()) {
			if (node.stalled) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Has the guard follow the connections' state and the cluster's masters: a node whose connection is down is
	 * taken as stalled at once, and a node no longer a master is forgotten.
	 */
	public void follow(Topology topology) {
		this.topology = topology;
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
		return new RedisBudget(this.timeoutNanos);
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

	/** A reply from the node to the call it was sent as {@code sent}: Redis is past every call sent before. */
	private void replied(Node node, long sent) {
		node.lastReply = System.nanoTime();
		List<Pending<?>> toUndo = node.answered(sent);
		EventExecutor loop = ThreadExecutorMap.currentExecutor();
		if (loop != null) {
			probe(loop);
		}
		if (node.stalled) {
			node.stalled = false;
			report("Redis answers again" + node.described() + ": rate-limit decisions go to Redis");
		}
		// after the stall has ended: the undos and kept calls go through the guard, which refuses calls to a
		// stalled node
		toUndo.forEach(this::undo);
		node.dueLater(sent).forEach(RedisGuard::sendOnce);
	}

	/** Sends a call kept for when its node answers; it bounds, counts and swallows its own outcome. */
	private static void sendOnce(Mono<?> later) {
		later.subscribe(done -> {
		}, error -> {
		});
	}

	/**
	 * Whether the node's connection is known to be down (closed, Lettuce reconnecting): nothing sent on it is
	 * answered before it is back, and Lettuce would queue it meanwhile. The node is then taken as stalled at once,
	 * without waiting the stall timeout (a killed Redis, a fresh instance whose Redis died): its decisions fail at
	 * once and send nothing. Once the connection is back the next decision is a trial, as after any stall.
	 */
	private boolean isDown(Node node, long now) {
		boolean down;
		try {
			down = this.topology.isDisconnected(node.id);
		}
		catch (RuntimeException ex) {
			// a topology that cannot tell says nothing: the stall rule decides
			down = false;
		}
		if (down && !node.down) {
			node.down = true;
			if (!node.stalled) {
				node.stalled = true;
				report("The connection to Redis" + node.described() + " is down: routes apply their fail-mode until "
						+ "it is back and Redis answers");
			}
		}
		else if (!down && node.down) {
			node.down = false;
			// back: the next decision (or the watchdog) may try it at once
			node.nextTrial = now;
		}
		return down;
	}

	/**
	 * Forgets the nodes that are no longer masters the client routes to (failed over, removed from the cluster):
	 * a master failed over while stalled never answers as such again, and would otherwise keep the guard stalled
	 * (health DEGRADED) and its places taken for good. What they kept to undo is sent where the keys live now.
	 */
	private void retireGoneNodes() {
		Set<Object> masters;
		try {
			masters = this.topology.masters();
		}
		catch (RuntimeException ex) {
			return;
		}
		if (masters == null || masters.isEmpty()) {
			return;
		}
		for (Map.Entry<Object, Node> entry : this.nodes.entrySet()) {
			Node node = entry.getValue();
			if (node.id == ONE_NODE || masters.contains(node.id) || !this.nodes.remove(entry.getKey(), node)) {
				continue;
			}
			boolean wasStalled = node.stalled;
			int kept = node.inFlight.get();
			List<Pending<?>> toUndo = node.retire();
			if (wasStalled || kept > 0) {
				report("Redis node " + node.id + " is no longer a master" + (wasStalled ? " (it was stalled)" : "")
						+ ": its " + kept + " place(s) in flight given back, its keys' decisions go to their master now");
			}
			toUndo.forEach(this::undo);
			node.retireLater().forEach(RedisGuard::sendOnce);
		}
	}

	/** Sends what undoes a given-up call, once; a call answered, or refused by Redis, has none to send. */
	private void undo(Pending<?> givenUp) {
		Mono<?> undo = givenUp.ifGivenUp;
		if (undo != null && givenUp.undone.compareAndSet(false, true)) {
			this.undone.incrementAndGet();
			undo.subscribe(done -> {
			}, error -> {
			});
		}
	}

	/**
	 * Logs on the log's own thread, not on the one answering a decision (an event loop, Lettuce's, a timer) nor
	 * the watchdog's: a log write that blocks (a console pipe nobody reads) must never hold an answer or a tick.
	 */
	private void report(String message) {
		this.reports.warn(() -> message);
	}

	private Node nodeOf(Object node) {
		Node known = this.nodes.get(node);
		if (known != null) {
			return known;
		}
		// nodes come and go with failovers and resharding; a bound keeps ids nobody uses from piling up
		if (this.nodes.size() >= MAX_NODES) {
			this.nodes.entrySet()
				.removeIf(entry -> !entry.getValue().stalled && entry.getValue().inFlight.get() == 0
						&& !entry.getValue().keepsLater() && entry.getKey() != ONE_NODE);
		}
		return this.nodes.computeIfAbsent(node, Node::new);
	}

	/** Makes sure the loop is probed each tick. */
	private void probe(EventExecutor loop) {
		if (!this.loops.containsKey(loop) && this.loops.size() < MAX_PROBED_LOOPS) {
			this.loops.putIfAbsent(loop, new ProbedLoop(loop));
		}
	}

	/** A Redis error reply (as opposed to a connection failure) shows Redis is there and answering. */
	private static boolean isReply(Throwable error) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisCommandExecutionException) {
				return true;
			}
		}
		return false;
	}

	/** Once per decision, when its sink is done (answered, failed or cancelled). */
	private void release(Pending<?> waiting) {
		if (waiting.finish()) {
			// its asker left (a client gone, a wait given up) before any outcome: given up
			waiting.givenUp = true;
		}
		this.pending.remove(waiting);
		boolean undo = waiting.givenUp && waiting.ifGivenUp != null;
		if (waiting.ended) {
			waiting.node.inFlight.decrementAndGet();
			if (undo) {
				// it ended after it was given up: ran (undone now, the node answers) or was refused (nothing to undo)
				undo(waiting);
			}
		}
		else {
			waiting.node.keepForGivenUp(waiting.sent, undo ? waiting : null, waiting.trialProbe);
		}
		if (waiting.trial) {
			waiting.node.nextTrial = System.nanoTime() + this.stallNanos;
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

	private Disposable schedule(@Nullable EventExecutor home, Runnable task, long delayNanos) {
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
	 * Sends a stalled node's trial probe, no request waiting on it: its answer ends the stall; with none
	 * within the timeout it is given up (a command not written yet never will be) and the next trial may go
	 * a stall timeout later.
	 */
	private void sendTrial(Node node, Mono<?> probe) {
		this.trials.incrementAndGet();
		long sentAs = node.sent.incrementAndGet();
		AtomicBoolean over = new AtomicBoolean();
		Disposable.Swap sent = Disposables.swap();
		Runnable end = () -> {
			if (over.compareAndSet(false, true)) {
				node.nextTrial = System.nanoTime() + this.stallNanos;
				node.trial.set(false);
			}
		};
		Disposable timer = this.elsewhere.schedule(() -> {
			end.run();
			sent.dispose();
		}, this.timeoutNanos, TimeUnit.NANOSECONDS);
		sent.replace(probe.subscribe(value -> replied(node, sentAs), error -> {
			if (isReply(error)) {
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

	private void timeOut(Pending<?> waiting) {
		if (waiting.finish()) {
			waiting.givenUp = true;
			TimeoutException error = new TimeoutException(
					"Redis did not answer within " + Duration.ofNanos(waiting.bound).toMillis() + " ms");
			deliver(waiting, () -> fail(waiting.sink, error));
		}
	}

	private void tick() {
		try {
			this.beforeTick.run();
			check();
		}
		catch (Throwable ex) {
			// a watchdog that dies ends stall detection for good: log and go on
			logger.error("Rate-limit watchdog failed a tick; it goes on", ex);
		}
	}

	private void check() {
		long now = System.nanoTime();
		if (now - this.lastTick > 3 * this.tickNanos) {
			this.pauseEnd = now;
		}
		this.lastTick = now;
		this.loops.values().removeIf(ProbedLoop::isGone);
		this.loops.values().forEach(ProbedLoop::probe);
		retireGoneNodes();
		Set<Node> down = new HashSet<>();
		for (Node node : this.nodes.values()) {
			if (isDown(node, now)) {
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
		for (Pending<?> waiting : this.pending) {
			if (waiting.get()) {
				continue;
			}
			Node node = waiting.node;
			long lastReply = node.lastReply;
			// a pause excuses silence, never the hard bound: the timer of each decision keeps that
			long since = Math.max(waiting.start, pauseEnd);
			// a connection known to be down answers nothing before it is back: no use waiting the stall timeout
			boolean hanging = down.contains(node)
					|| lastReply - since < 0 && now - since >= this.stallNanos && loopsFreeSince(since);
			boolean late = now - waiting.start >= waiting.bound;
			if (hanging && !node.stalled) {
				node.stalled = true;
				if (node.lastReply != lastReply) {
					// a reply came in meanwhile: Redis answers after all
					node.stalled = false;
					continue;
				}
				report("Redis" + node.described() + " answered nothing for " + Duration.ofNanos(now - since).toMillis() + " ms while "
						+ this.pending.size() + " decision(s) waited: routes apply their fail-mode, trying Redis "
						+ "with one decision at a time until it answers");
			}
			if ((hanging || late) && waiting.finish()) {
				waiting.givenUp = true;
				TimeoutException error = new TimeoutException(down.contains(node) ? "The connection to Redis is down"
						: hanging ? "Redis answered nothing for " + Duration.ofNanos(this.stallNanos).toMillis() + " ms"
						: "Redis did not answer within " + Duration.ofNanos(waiting.bound).toMillis() + " ms");
				deliver(waiting, () -> fail(waiting.sink, error));
			}
		}
	}

	/**
	 * Whether every loop that reads Redis replies or asked for decisions ran a probe well after {@code since}:
	 * then it was free to write and read, and the silence is Redis's. A loop starved of CPU or busy with other
	 * work runs its probes late, and its silence is ours; only the hard timeout applies then.
	 */
	private boolean loopsFreeSince(long since) {
		for (ProbedLoop loop : this.loops.values()) {
			if (loop.ran - since < this.stallNanos / 2) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Completes on the asking event loop. Left on Lettuce's thread, the rest of every request (the gateway's
	 * filters, proxying, the response) would run on the one thread that reads all Redis replies of the
	 * connection: on a cold JVM that kept replies unread for over 200 ms (measured), and under load it makes
	 * one thread do the work of all event loops. The watchdog's and the timers' failures go back the same
	 * way. An asker that was no event loop (a resolver that hopped threads) is answered on a Reactor scheduler.
	 */
	private void deliver(Pending<?> waiting, Runnable completion) {
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

	private void fail(MonoSink<?> sink, Throwable error) {
		this.failures.incrementAndGet();
		this.unreported.incrementAndGet();
		if (this.failureReports.isDue()) {
			// counted when written: every failure up to that moment is in one line
			this.failureReports.warn(() -> this.unreported.getAndSet(0) + " rate-limit decision(s) failed since the "
					+ "last report, routes applied their fail-mode; latest: " + error);
		}
		sink.error(error);
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

	/** A decision waiting on Redis; finished once, by its answer, its timer, the watchdog or its subscriber leaving. */
	private static final class Pending<T> extends AtomicBoolean {

		final MonoSink<T> sink;

		final long start;

		final boolean trial;

		/** The Netty event loop that asked, if any: the request goes on there. */
		final @Nullable EventExecutor home;

		/** Completed where the outcome arrives: see {@link #answeredWhereReplied}. */
		final boolean inline;

		final Node node;

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

		Pending(MonoSink<T> sink, long start, long bound, @Nullable RedisBudget budget, boolean trial,
				@Nullable EventExecutor home, boolean inline, Node node, long sent, @Nullable Mono<?> ifGivenUp,
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

	/** What the guard knows of one Redis node's progress. */
	private static final class Node {

		final Object id;

		/** When the node last answered a decision (a result or an error reply), in {@link System#nanoTime()}. */
		volatile long lastReply = System.nanoTime();

		volatile boolean stalled;

		/** Whether its connection was last seen down (then it is stalled too). */
		volatile boolean down;

		/** Decisions waiting on this node: bounded per node, so one frozen master cannot take the others' room. */
		final AtomicInteger inFlight = new AtomicInteger();

		final AtomicBoolean trial = new AtomicBoolean();

		/** While stalled, no trial before this time: a lone client's every request would wait otherwise. */
		volatile long nextTrial = System.nanoTime();

		/** Numbers the calls sent to the node in the order they go; it answers them in that order. */
		final AtomicLong sent = new AtomicLong();

		/** Places in {@link #inFlight} kept for decisions given up with no reply (their commands may yet run). */
		private int givenUp;

		/** The number of the latest call among {@link #givenUp}. */
		private long lastGivenUp;

		private volatile boolean keepsGivenUp;

		/** Given-up calls whose effect is undone once the node answers a later call: at most its kept places. */
		private final List<Pending<?>> toUndo = new ArrayList<>();

		/** The probe the watchdog sends while places are kept (one of a given-up call's). */
		private @Nullable Mono<?> probe;

		/** Calls the node could not take, each sent once it answers a call sent after it was kept. */
		private final List<Later> later = new ArrayList<>();

		private volatile boolean keepsLater;

		Node(Object id) {
			this.id = id;
		}

		/**
		 * Counts one more decision in flight unless {@code max} wait already. Never above {@code max}, also not for
		 * an instant: an increment undone when over would show {@code max + 1} to {@link #inFlight()} (measured).
		 */
		boolean admit(int max) {
			int now;
			do {
				now = this.inFlight.get();
				if (now >= max) {
					return false;
				}
			}
			while (!this.inFlight.compareAndSet(now, now + 1));
			return true;
		}

		boolean keepsGivenUp() {
			return this.keepsGivenUp;
		}

		/**
		 * Keeps the place of a call given up with no reply, and what undoes it, if anything: both wait for a reply
		 * to a call sent after it.
		 * @param undo the given-up call whose effect is undone then; null when it has nothing to undo
		 * @param probe a call that changes nothing on this node, for the watchdog's trials while undos wait; null for none
		 */
		synchronized void keepForGivenUp(long sent, @Nullable Pending<?> undo, @Nullable Mono<?> probe) {
			this.givenUp++;
			this.lastGivenUp = Math.max(this.lastGivenUp, sent);
			if (undo != null) {
				this.toUndo.add(undo);
			}
			if (undo != null && probe != null) {
				this.probe = probe;
			}
			this.keepsGivenUp = true;
		}

		/**
		 * A reply to the call numbered {@code sent}: a node answers in the order it was sent to, so the given-up
		 * calls sent before it were answered or never written, and their places come back. (Two event loops may
		 * write in the other order than they numbered: a place then comes back a reply early.)
		 * @return the given-up calls sent before it whose effect is to be undone now (their commands have run, or
		 * never will)
		 */
		List<Pending<?>> answered(long sent) {
			if (!this.keepsGivenUp) {
				return List.of();
			}
			synchronized (this) {
				List<Pending<?>> due = List.of();
				if (!this.toUndo.isEmpty()) {
					due = new ArrayList<>();
					for (Iterator<Pending<?>> kept = this.toUndo.iterator(); kept.hasNext();) {
						Pending<?> undo = kept.next();
						if (undo.sent < sent) {
							due.add(undo);
							kept.remove();
						}
					}
				}
				if (this.givenUp > 0 && sent > this.lastGivenUp) {
					this.inFlight.addAndGet(-this.givenUp);
					this.givenUp = 0;
					this.keepsGivenUp = false;
					if (this.later.isEmpty()) {
						// the watchdog's trials go on while calls kept for later wait
						this.probe = null;
					}
				}
				return due;
			}
		}

		/**
		 * A call that changes nothing on this node, for the watchdog's trial while undos of given-up calls wait for
		 * a reply; null for none. (Places alone wait for the next reply, or a probe once they fill the node's room:
		 * a client that left mid-decision costs Redis nothing more.)
		 */
		synchronized @Nullable Mono<?> probeWhileKept() {
			return (this.toUndo.isEmpty() && this.later.isEmpty()) ? null : this.probe;
		}

		boolean keepsLater() {
			return this.keepsLater;
		}

		/**
		 * Keeps a call to send once the node answers a call sent after now; false when {@code max} are kept.
		 * Numbered by the calls sent so far: a reply to one of those may be on its way, and says nothing of now.
		 */
		synchronized boolean keepForLater(Mono<?> call, Mono<?> probe, int max) {
			if (this.later.size() >= max) {
				return false;
			}
			this.later.add(new Later(this.sent.get(), call));
			this.probe = probe;
			this.keepsLater = true;
			return true;
		}

		/** The kept calls due now that the node answered the call numbered {@code sent}: those kept before it. */
		List<Mono<?>> dueLater(long sent) {
			if (!this.keepsLater) {
				return List.of();
			}
			synchronized (this) {
				List<Mono<?>> due = new ArrayList<>();
				for (Iterator<Later> kept = this.later.iterator(); kept.hasNext();) {
					Later call = kept.next();
					if (call.after < sent) {
						due.add(call.call);
						kept.remove();
					}
				}
				this.keepsLater = !this.later.isEmpty();
				return due;
			}
		}

		/** Every kept call: the node is forgotten, they go where their keys live now. */
		synchronized List<Mono<?>> retireLater() {
			List<Mono<?>> due = new ArrayList<>();
			this.later.forEach(call -> due.add(call.call));
			this.later.clear();
			this.keepsLater = false;
			return due;
		}

		/**
		 * Forgets what this node kept: it is no longer a master the client routes to (failed over, removed).
		 * @return the given-up calls whose effect is to be undone (sent where their keys live now)
		 */
		synchronized List<Pending<?>> retire() {
			List<Pending<?>> due = new ArrayList<>(this.toUndo);
			this.toUndo.clear();
			this.givenUp = 0;
			this.keepsGivenUp = false;
			this.probe = null;
			this.stalled = false;
			return due;
		}

		String described() {
			return (this.id == ONE_NODE) ? "" : " (node " + this.id + ")";
		}

	}

	/** A call kept for when its node answers: sent once a reply comes to a call numbered above {@code after}. */
	private record Later(long after, Mono<?> call) {
	}

	/** Redis is taken to be hanging, and another decision is already trying it. */
	static final class RedisStalledException extends TimeoutException {

		RedisStalledException() {
			super("Redis is hanging: deciding by fail-mode while one trial decision waits on it");
		}

		@Override
		public synchronized Throwable fillInStackTrace() {
			return this;
		}

	}

	/** The answer has waited all its budget for Redis already. */
	static final class RedisBudgetSpentException extends TimeoutException {

		RedisBudgetSpentException() {
			super("This answer has waited redis-timeout for Redis already: deciding by fail-mode");
		}

		@Override
		public synchronized Throwable fillInStackTrace() {
			return this;
		}

	}

	/** Too many decisions wait on Redis already. */
	static final class RedisShedException extends TimeoutException {

		RedisShedException(int maxInFlight) {
			super(maxInFlight + " rate-limit decisions wait on Redis already: deciding by fail-mode");
		}

		@Override
		public synchronized Throwable fillInStackTrace() {
			return this;
		}

	}

}
