package io.windowlimiter.gateway.scaleout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.IntStream;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisNode;

/**
 * Keeps deciding, from a few callers at once and for many clients, while something happens to Redis
 * (a failover), then reports how long decisions failed or were slow, and how many requests Redis had
 * acknowledged as counted but forgot. Counting uses a fixed window of 366 days with a large limit, so
 * every decision is allowed and counts one; what Redis kept is read back through the limiter itself
 * (its {@code remaining}), whatever the storage format. A caller gives up on a decision after
 * {@link #GIVE_UP}.
 */
final class FailoverProbe {

	/** Decisions slower than this count as disrupted: the gateway's default Redis timeout. */
	static final Duration SLOW = Duration.ofMillis(100);

	/**
	 * How long a caller waits for one decision. The gateway waits less (its Redis timeout) and answers
	 * with the route's fail-mode; without a bound, a decision queued for a crashed node would wait for
	 * Lettuce's command timeout (60 s) and take its caller out of the measurement.
	 */
	static final Duration GIVE_UP = Duration.ofSeconds(1);

	private static final long LIMIT = 200_000;

	private final LimitScript script;

	/** The gateway's guard: decisions go through it as requests' do (stall, trial, hard bound, NOSCRIPT). */
	private final RedisGuard guard;

	private final WindowPolicy policy = new WindowPolicy(Algorithm.FIXED_WINDOW, LIMIT, WindowPolicy.MAX_WINDOW);

	private final List<String> keys;

	private final int callers;

	/**
	 * @param script the limiter's script on the Redis under test; the probe counts with a fixed window
	 * @param clients how many client keys to spread the decisions over (they spread over slots)
	 * @param callers how many decisions are in flight at once
	 */
	FailoverProbe(LimitScript script, RedisGuard guard, int clients, int callers) {
		this.script = script;
		this.guard = guard;
		String route = "failover-" + System.nanoTime();
		String suffix = this.policy.algorithm().keySuffix();
		this.keys = IntStream.range(0, clients).mapToObj(i -> RedisKeys.of(route, "client-" + i, suffix)).toList();
		this.callers = callers;
	}

	/**
	 * Decides for {@code before}, runs the trigger, then goes on until decisions have gone well for
	 * {@code quiet} after the last trouble (or {@code atMost} has passed since the trigger).
	 */
	Report run(Runnable trigger, Duration before, Duration quiet, Duration atMost) {
		AtomicLongArray acknowledged = new AtomicLongArray(this.keys.size());
		ConcurrentLinkedQueue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
		AtomicBoolean stop = new AtomicBoolean();
		List<Thread> threads = new ArrayList<>();
		for (int c = 0; c < this.callers; c++) {
			int caller = c;
			Thread thread = new Thread(() -> {
				for (int i = caller; !stop.get(); i += this.callers) {
					int client = i % this.keys.size();
					long start = System.nanoTime();
					boolean ok;
					try {
						String key = this.keys.get(client);
						Decision decision = this.guard
							.protect(this.script.nodeOf(List.of(key)), this.script.decideOne(key, this.policy, 1, ""))
							.block(GIVE_UP);
						ok = decision != null && decision.allowed();
						if (ok) {
							acknowledged.incrementAndGet(client);
						}
					}
					catch (RuntimeException ex) {
						ok = false;
						// a stalled guard answers at once: do not spin on the 2 cores the suite shares
						RedisNode.pause(Duration.ofMillis(5));
					}
					outcomes.add(new Outcome(start, System.nanoTime(), ok));
				}
			}, "failover-probe-" + c);
			thread.start();
			threads.add(thread);
		}
		RedisNode.pause(before);
		long triggered = System.nanoTime();
		trigger.run();
		long triggerDone = System.nanoTime();
		while (true) {
			RedisNode.pause(Duration.ofMillis(50));
			long now = System.nanoTime();
			long lastTrouble = outcomes.stream().filter(Outcome::troubled).mapToLong(Outcome::end).max().orElse(0);
			boolean calm = now - Math.max(lastTrouble, triggerDone) > quiet.toNanos();
			if (calm || now - triggered > atMost.toNanos()) {
				break;
			}
		}
		stop.set(true);
		threads.forEach(FailoverProbe::join);
		return report(outcomes, acknowledged, triggered);
	}

	private Report report(ConcurrentLinkedQueue<Outcome> outcomes, AtomicLongArray acknowledged, long triggered) {
		// a cold start before the trigger is not the failover's doing
		List<Outcome> troubled = outcomes.stream().filter(outcome -> outcome.troubled() && outcome.end() > triggered).toList();
		long failed = outcomes.stream().filter(outcome -> !outcome.ok()).count();
		long firstTrouble = troubled.stream().mapToLong(Outcome::start).min().orElse(triggered);
		long lastTrouble = troubled.stream().mapToLong(Outcome::end).max().orElse(triggered);
		long slowest = outcomes.stream().mapToLong(outcome -> outcome.end() - outcome.start()).max().orElse(0);
		boolean resumed = outcomes.stream().anyMatch(outcome -> outcome.ok() && outcome.start() > lastTrouble);
		long acked = 0;
		long lost = 0;
		long extra = 0;
		long unread = 0;
		for (int client = 0; client < this.keys.size(); client++) {
			Decision after;
			try {
				after = this.script.decideOne(this.keys.get(client), this.policy, 1, "")
					.block(GIVE_UP.multipliedBy(5));
			}
			catch (RuntimeException stillFailing) {
				unread++;
				continue;
			}
			long kept = LIMIT - after.remaining() - 1;
			long counted = acknowledged.get(client);
			acked += counted;
			lost += Math.max(0, counted - kept);
			extra += Math.max(0, kept - counted);
		}
		long first = outcomes.stream().mapToLong(Outcome::start).min().orElse(triggered);
		long last = outcomes.stream().mapToLong(Outcome::end).max().orElse(triggered);
		return new Report(outcomes.size(), Duration.ofNanos(last - first), failed, troubled.size(), Duration.ofNanos(troubled.isEmpty() ? 0 : lastTrouble - firstTrouble),
				troubledTime(troubled), Duration.ofNanos(slowest), resumed && unread == 0, acked, lost, extra, unread);
	}

	/** How long at least one troubled decision was under way: scattered hiccups add up to little. */
	private static Duration troubledTime(List<Outcome> troubled) {
		List<Outcome> byStart = troubled.stream().sorted(Comparator.comparingLong(Outcome::start)).toList();
		long total = 0;
		long from = Long.MIN_VALUE;
		long to = Long.MIN_VALUE;
		for (Outcome outcome : byStart) {
			if (outcome.start() > to) {
				total += (to > from) ? to - from : 0;
				from = outcome.start();
			}
			to = Math.max(to, outcome.end());
		}
		total += (to > from) ? to - from : 0;
		return Duration.ofNanos(total);
	}

	private static void join(Thread thread) {
		try {
			thread.join(60_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private record Outcome(long start, long end, boolean ok) {

		/** Failed, or slower than the gateway waits by default. */
		boolean troubled() {
			return !this.ok || this.end - this.start > SLOW.toNanos();
		}

	}

	/**
	 * What a failover did to decisions.
	 * @param decisions decisions made in the whole run
	 * @param ran how long the run took, from the first decision to the last
	 * @param failed decisions that ended in an error
	 * @param troubled decisions that failed or took longer than {@link #SLOW}
	 * @param disrupted from the start of the first troubled decision to the end of the last
	 * @param troubledTime how long at least one troubled decision was under way
	 * @param slowest the longest any decision took
	 * @param resumed whether decisions went well after the last troubled one
	 * @param acknowledged requests Redis answered as counted
	 * @param lost acknowledged requests Redis no longer counted afterwards
	 * @param extra requests Redis counted although the caller saw an error
	 * @param unread clients whose count could not be read back after the run (decisions still failing)
	 */
	record Report(long decisions, Duration ran, long failed, long troubled, Duration disrupted, Duration troubledTime, Duration slowest, boolean resumed,
			long acknowledged, long lost, long extra, long unread) {

		/** Lost counts as seconds of this run's decisions: how long the limiter was, in effect, not counting. */
		double lostSeconds() {
			return this.lost / (this.decisions / (this.ran.toNanos() / 1e9));
		}

		@Override
		public String toString() {
			return String.format("%d decisions in %.1f s, %d failed, %d failed or slower than %d ms, disrupted for %d ms "
					+ "(troubled decisions under way %d ms), slowest %d ms, resumed: %s; %d acknowledged, %d lost, "
					+ "%d counted though failed, %d clients still failing after the run", this.decisions,
					this.ran.toNanos() / 1e9, this.failed, this.troubled, SLOW.toMillis(),
					this.disrupted.toMillis(), this.troubledTime.toMillis(), this.slowest.toMillis(),
					this.resumed, this.acknowledged, this.lost, this.extra, this.unread);
		}

	}

}
