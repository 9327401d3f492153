package io.windowlimiter.gateway.failure;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * {@code stallTimeout}. Then the guard is <em>stalled</em>: decisions fail at once, except one trial
 * at a time, whose answer (any reply from Redis) ends the stall. {@code timeout} is the hard bound for
 * a decision that waits while Redis answers others (one Redis Cluster node hanging).
 *
 * <p>One watchdog thread checks the decisions in flight every quarter of the shorter bound. Silence
 * counts against Redis only while this JVM could have read a reply: a tick that comes late means the
 * JVM was paused (GC), so the time before it is not counted; and each event loop that reads Redis
 * replies is sent a probe every tick, so a loop starved of CPU (a crowded machine) is seen by its late
 * probes, and its silence is not taken for Redis's.
 *
 * <p>Every outcome is handed back to the Netty event loop that asked, so that Lettuce's thread does
 * nothing but read replies, and a busy gateway cannot look like a silent Redis.
 *
 * <p>Failures are counted and logged at most once per {@code logInterval}; entering and leaving a
 * stall is always logged.
 */
public final class RedisGuard implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisGuard.class);

	/** Lettuce reads replies on a few I/O threads; more than this many would be a surprise. */
	private static final int MAX_REPLY_LOOPS = 64;

	private final long timeoutNanos;

	private final long stallNanos;

	private final long tickNanos;

	private final long logIntervalNanos;

	private final Set<Pending<?>> pending = ConcurrentHashMap.newKeySet();

	/** The event loops Redis replies were read on, each with when it last ran a watchdog probe. */
	private final Map<EventExecutor, ReplyLoop> replyLoops = new ConcurrentHashMap<>();

	/** When Redis last answered a decision (a result or an error reply), in {@link System#nanoTime()}. */
	private volatile long lastReply = System.nanoTime();

	/** When the watchdog last found this JVM paused; waiting before it is not Redis's doing. */
	private volatile long pauseEnd = System.nanoTime();

	private volatile boolean stalled;

	private final AtomicBoolean trial = new AtomicBoolean();

	/** While stalled, no trial before this time: a lone client's every request would wait otherwise. */
	private volatile long nextTrial = System.nanoTime();

	private final AtomicLong failures = new AtomicLong();

	private final AtomicLong unreported = new AtomicLong();

	private final AtomicLong lastReport = new AtomicLong(System.nanoTime() - Long.MAX_VALUE / 2);

	private final ScheduledExecutorService watchdog;

	private long lastTick = System.nanoTime();

	/**
	 * @param timeout the longest any decision waits
	 * @param stallTimeout how long Redis may answer nothing before the decisions waiting on it fail
	 * @param logInterval the shortest time between two log lines about failed decisions
	 */
	public RedisGuard(Duration timeout, Duration stallTimeout, Duration logInterval) {
		if (timeout.isNegative() || timeout.isZero() || stallTimeout.isNegative() || stallTimeout.isZero()) {
			throw new IllegalArgumentException("Redis timeouts must be positive: " + timeout + ", " + stallTimeout);
		}
		this.timeoutNanos = timeout.toNanos();
		this.stallNanos = Math.min(stallTimeout.toNanos(), this.timeoutNanos);
		this.tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), this.stallNanos / 4);
		this.logIntervalNanos = logInterval.toNanos();
		this.watchdog = Executors.newSingleThreadScheduledExecutor(task -> {
			Thread thread = new Thread(task, "window-rate-limiter-watchdog");
			thread.setDaemon(true);
			return thread;
		});
		this.watchdog.scheduleAtFixedRate(this::check, this.tickNanos, this.tickNanos, TimeUnit.NANOSECONDS);
	}

	/** The call, failed with a {@link TimeoutException} when Redis hangs or it waits past the timeout. */
	public <T> Mono<T> protect(Mono<T> call) {
		return Mono.<T>create(sink -> {
			boolean isTrial = this.stalled;
			if (isTrial && (System.nanoTime() - this.nextTrial < 0 || !this.trial.compareAndSet(false, true))) {
				fail(sink, new RedisStalledException());
				return;
			}
			Pending<T> waiting = new Pending<>(sink, System.nanoTime(), isTrial, ThreadExecutorMap.currentExecutor());
			this.pending.add(waiting);
			sink.onDispose(() -> release(waiting));
			waiting.upstream = call.subscribe(value -> {
				replied();
				if (waiting.finish()) {
					waiting.deliver(() -> sink.success(value));
				}
			}, error -> {
				if (isReply(error)) {
					replied();
				}
				if (waiting.finish()) {
					waiting.deliver(() -> fail(sink, error));
				}
			}, () -> {
				// after a value this finds the decision finished: its reply was counted already
				if (waiting.finish()) {
					replied();
					waiting.deliver(sink::success);
				}
			});
			if (waiting.get()) {
				// answered or abandoned while subscribing: nothing more to wait for
				waiting.upstream.dispose();
			}
		});
	}

	/** How many decisions failed since start. */
	public long failures() {
		return this.failures.get();
	}

	/** Whether Redis is taken to be hanging: decisions fail at once, bar one trial at a time. */
	public boolean isStalled() {
		return this.stalled;
	}

	@Override
	public void close() {
		this.watchdog.shutdownNow();
	}

	private void replied() {
		this.lastReply = System.nanoTime();
		EventExecutor loop = ThreadExecutorMap.currentExecutor();
		if (loop != null && this.replyLoops.size() < MAX_REPLY_LOOPS && !this.replyLoops.containsKey(loop)) {
			this.replyLoops.putIfAbsent(loop, new ReplyLoop(loop));
		}
		if (this.stalled) {
			this.stalled = false;
			logger.warn("Redis answers again: rate-limit decisions go to Redis");
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

	private void release(Pending<?> waiting) {
		this.pending.remove(waiting);
		if (waiting.trial) {
			this.nextTrial = System.nanoTime() + this.stallNanos;
			this.trial.set(false);
		}
		Disposable upstream = waiting.upstream;
		if (upstream != null) {
			upstream.dispose();
		}
	}

	private void check() {
		long now = System.nanoTime();
		if (now - this.lastTick > 3 * this.tickNanos) {
			this.pauseEnd = now;
		}
		this.lastTick = now;
		this.replyLoops.values().forEach(ReplyLoop::probe);
		long pauseEnd = this.pauseEnd;
		long lastReply = this.lastReply;
		for (Pending<?> waiting : this.pending) {
			long since = Math.max(waiting.start, pauseEnd);
			boolean hanging = lastReply - since < 0 && now - since >= this.stallNanos && readersFreeSince(since);
			if (hanging || now - since >= this.timeoutNanos) {
				if (hanging && !this.stalled) {
					this.stalled = true;
					logger.warn("Redis answered nothing for " + Duration.ofNanos(now - since).toMillis() + " ms while "
							+ this.pending.size() + " decision(s) waited: routes apply their fail-mode, trying Redis "
							+ "with one decision at a time until it answers");
				}
				if (waiting.finish()) {
					TimeoutException error = new TimeoutException(hanging
							? "Redis answered nothing for " + Duration.ofNanos(this.stallNanos).toMillis() + " ms"
							: "Redis did not answer within " + Duration.ofNanos(this.timeoutNanos).toMillis() + " ms");
					waiting.deliver(() -> fail(waiting.sink, error));
				}
			}
		}
	}

	/**
	 * Whether every loop that reads Redis replies ran a probe well after {@code since}: then it was free
	 * to read, and the silence is Redis's. A loop starved of CPU or busy with other work runs its probes
	 * late, and its silence is ours; only the hard timeout applies then.
	 */
	private boolean readersFreeSince(long since) {
		for (ReplyLoop loop : this.replyLoops.values()) {
			if (loop.ran - since < this.stallNanos / 2) {
				return false;
			}
		}
		return true;
	}

	private void fail(MonoSink<?> sink, Throwable error) {
		this.failures.incrementAndGet();
		long pending = this.unreported.incrementAndGet();
		long now = System.nanoTime();
		long last = this.lastReport.get();
		if (now - last >= this.logIntervalNanos && this.lastReport.compareAndSet(last, now)) {
			this.unreported.addAndGet(-pending);
			logger.warn(pending + " rate-limit decision(s) failed since the last report, routes applied their "
					+ "fail-mode; latest: " + error);
		}
		sink.error(error);
	}

	/** An event loop Redis replies are read on, probed by the watchdog to show it is free to read. */
	private static final class ReplyLoop {

		final EventExecutor loop;

		final AtomicBoolean queued = new AtomicBoolean();

		volatile long ran = System.nanoTime();

		ReplyLoop(EventExecutor loop) {
			this.loop = loop;
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

	/** A decision waiting on Redis; finished once, by its answer, the watchdog or its subscriber leaving. */
	private static final class Pending<T> extends AtomicBoolean {

		final MonoSink<T> sink;

		final long start;

		final boolean trial;

		/** The Netty event loop that asked, if any: the request goes on there. */
		final @Nullable EventExecutor home;

		volatile Disposable upstream;

		Pending(MonoSink<T> sink, long start, boolean trial, @Nullable EventExecutor home) {
			this.sink = sink;
			this.start = start;
			this.trial = trial;
			this.home = home;
		}

		boolean finish() {
			return compareAndSet(false, true);
		}

		/**
		 * Completes on the asking event loop. Left on Lettuce's thread, the rest of every request (the
		 * gateway's filters, proxying, the response) would run on the one thread that reads all Redis
		 * replies of the connection: on a cold JVM that kept replies unread for over 200 ms (measured),
		 * and under load it makes one thread do the work of all event loops. The watchdog's failures go
		 * back the same way, so it never runs a request's remaining work itself.
		 */
		void deliver(Runnable completion) {
			EventExecutor loop = this.home;
			if (loop == null || loop.inEventLoop()) {
				completion.run();
				return;
			}
			try {
				loop.execute(completion);
			}
			catch (RejectedExecutionException ex) {
				// the loop is shutting down: complete here rather than never
				completion.run();
			}
		}

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

}
