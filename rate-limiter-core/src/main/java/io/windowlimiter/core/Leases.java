package io.windowlimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.policy.CompiledPolicy;
import io.windowlimiter.core.policy.LeaseArgs;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * Parts of hot clients' quotas this instance leased from Redis, on routes with a {@code lease} (docs/hot-clients.md).
 * A client this instance sees often enough that its part would be {@link #SMALLEST_PART} units or more gets its next
 * request decided at that request's cost plus a part (three quarters of what it sent in the last lease time, at most
 * a {@link #SHARE}th of what Redis last said remains): one script call reserves both, as a request's cost is reserved.
 * The client's next requests are admitted here from the part while it lasts, without Redis; what is left of it is
 * given back to Redis by a settle of that reservation (to the units used) when the part ends: after the route's
 * {@code lease}, at the end of the fixed window it was counted in, when its token bucket with the part back in would
 * be full again, when a request needs more than is left, when the client's policy or an operator's rule changes, and
 * at shutdown. Since every unit is reserved in Redis before it is admitted, all instances together
 * admit no more than the limits allow; what a lease costs is that another instance may refuse the client while this
 * one holds units it has not used yet, at most one part.
 *
 * <p>Every client of a leasing route is counted here (its units per lease time); a quiet one never gets a part, so
 * Redis decides it request by request as without leases. Bounded: at most {@link #MAX_CLIENTS} clients, each
 * forgotten after a second without requests; a client forgotten with a part gives it back.
 */
final class Leases {

	/** The smallest part, in units: a smaller one would save too few round trips. */
	static final long SMALLEST_PART = 4;

	/** A part is at most this fraction of what Redis last said remains, so other instances find the rest. */
	static final long SHARE = 4;

	/** The most clients counted at once; past it the least recent are forgotten (giving their parts back). */
	static final long MAX_CLIENTS = 100_000;

	/** What settles a part's reservation to the units used: {@code Settles}' settle. */
	private final BiFunction<Reservation, Long, Mono<Settled>> settle;

	private final RateLimitMetrics metrics;

	private final LongSupplier nanoTime;

	/** Runs each part's end at its time. */
	private final Scheduler timer;

	/** Bumped when every part is given back (a change of policy): a part taken before it arrived is given back. */
	private final AtomicLong generation = new AtomicLong();

	/** By the client's key in the deny cache ({@link DenyCache#keyOf}): route, plan and the client's first key. */
	private final Cache<String, Client> clients;

	Leases(BiFunction<Reservation, Long, Mono<Settled>> settle, RateLimitMetrics metrics, LongSupplier nanoTime,
			Scheduler timer) {
		this.settle = settle;
		this.metrics = metrics;
		this.nanoTime = nanoTime;
		this.timer = timer;
		this.clients = Caffeine.newBuilder()
			.maximumSize(MAX_CLIENTS)
			.expireAfterAccess(Duration.ofSeconds(1).plus(LeaseArgs.MAX))
			.removalListener((String key, @Nullable Client client, RemovalCause cause) -> {
				if (client != null && cause != RemovalCause.REPLACED) {
					giveBack(client.detach(null));
				}
			})
			.build();
	}

	/**
	 * What to do with a request of the client costing {@code cost} on a policy that leases ({@link CompiledPolicy#leases}).
	 * @param waited whether the request waited for a part another request was taking: it does not wait twice
	 */
	Step next(String routeId, CompiledPolicy policy, String cacheKey, long cost, boolean waited) {
		long now = this.nanoTime.getAsLong();
		Client client = this.clients.get(cacheKey, key -> new Client(now));
		Part ended;
		Step step;
		synchronized (client) {
			client.count(now, cost, policy.route.lease().toNanos());
			Part part = client.part;
			if (part != null && part.admits(cost, now, this.generation.get())) {
				part.used += cost;
				step = new Local(part.verdict(now));
				ended = null;
			}
			else {
				ended = client.detach(part);
				step = (client.taking != null && !waited) ? new Wait(client.taking.asMono())
						: take(policy, client, cost, now);
			}
		}
		giveBack(ended);
		if (step instanceof Local) {
			this.metrics.leaseLocal(routeId);
		}
		return step;
	}

	/** A take of a part with this request when the client is hot and Redis left enough; else Redis decides alone. */
	private Step take(CompiledPolicy policy, Client client, long cost, long now) {
		// three quarters of what the client sent in the last lease time: spent before the lease ends, as a rule, so
		// the next part is taken with a request rather than this one given back
		long wanted = client.previous * 3 / 4;
		long age = now - client.remainingAt;
		// Redis answered the client within the last two lease times (a part ends after one): a take written just as
		// Redis froze runs when it comes back and charges a part nobody admits, so none is asked of a Redis not heard
		// from lately
		if (wanted < SMALLEST_PART || client.taking != null || client.remainingFor < 0 || age > client.remainingFor
				|| age > 2 * policy.route.lease().toNanos()) {
			return Decide.ALONE;
		}
		long part = Math.min(Math.min(wanted, (client.remaining - cost) / SHARE), mostAtOnce(policy) - cost);
		// a part held in a token bucket ends when the bucket would be full again with it back in: one that would end
		// within a quarter of the lease time is not worth a take
		if (part < SMALLEST_PART
				|| client.remainingFor - age - Part.bucketRefill(policy, part) < policy.route.lease().toNanos() / 4) {
			return Decide.ALONE;
		}
		client.taking = Sinks.empty();
		return new Take(this, client, part, now, this.generation.get(), client.forgotten);
	}

	/** The most one decision may reserve in the policy's limits: the smallest limit (or burst). */
	private static long mostAtOnce(CompiledPolicy policy) {
		long most = Long.MAX_VALUE;
		for (WindowPolicy limit : policy.policies) {
			most = Math.min(most, Math.min(limit.limit(), limit.burst()));
		}
		return most;
	}

	/** This instance's clock for leases, in nanoseconds. */
	long now() {
		return this.nanoTime.getAsLong();
	}

	/** Notes what Redis said remains of the client's limits, deciding one of its requests alone. */
	void decided(CompiledPolicy policy, String cacheKey, Verdict verdict, long sentNanos) {
		Client client = this.clients.getIfPresent(cacheKey);
		if (client != null) {
			synchronized (client) {
				client.remember(policy, verdict, sentNanos);
			}
		}
	}

	/** Gives back the parts of the client's policies on one route: an operator changed or reset its standing. */
	void forget(String cacheKey) {
		Client client = this.clients.getIfPresent(cacheKey);
		if (client != null) {
			Part part;
			synchronized (client) {
				part = client.detach(client.part);
				client.remainingFor = -1;
				client.forgotten++;
			}
			giveBack(part);
		}
	}

	/**
	 * Gives back every part (a change of policy, shutdown); a part being taken now is given back when it arrives.
	 * @return the settles sent, done when Redis answered them (or the guard gave them up)
	 */
	Mono<Void> giveBackAll() {
		this.generation.incrementAndGet();
		List<Mono<Settled>> sent = new ArrayList<>();
		for (Client client : this.clients.asMap().values()) {
			Part part;
			synchronized (client) {
				part = client.detach(client.part);
				// what Redis said remains was said of the old limits
				client.remainingFor = -1;
			}
			if (part != null) {
				sent.add(giveBack(part));
			}
		}
		return Mono.when(sent);
	}

	/** Settles the part's reservation to what was admitted of it, when something is left; counts it given back. */
	private Mono<Settled> giveBack(@Nullable Part part) {
		if (part == null) {
			return Mono.empty();
		}
		long left = part.size - part.used;
		if (left <= 0) {
			return Mono.empty();
		}
		this.metrics.lease(part.reservation.routeId(), "returned");
		Mono<Settled> settled = this.settle.apply(part.reservation, part.reservation.cost() - left).cache();
		settled.subscribe(result -> {
		}, error -> {
		});
		return settled;
	}

	/** What to do with a request. */
	sealed interface Step permits Local, Wait, Take, Decide {
	}

	/** Admitted from the client's part: the verdict to answer with, its remaining counted down by what this part admitted. */
	record Local(Verdict verdict) implements Step {
	}

	/** Another request of the client is taking a part: ask again once it has ({@code next} with {@code waited}). */
	record Wait(Mono<Void> taken) implements Step {
	}

	/** Redis decides the request alone, as without leases; tell {@link #decided} what it said. */
	enum Decide implements Step {

		ALONE

	}

	/**
	 * Decide the request at its cost plus {@link #part} units, in one script call; then tell {@link #taken} (before
	 * answering), or {@link #refused} (and decide the request alone), or {@link #failed}. Exactly one of those three
	 * is called for every take, or the client's other requests wait for a part until the guard's timeout.
	 */
	static final class Take implements Step {

		private final Leases leases;

		private final Client client;

		final long part;

		private final long sentNanos;

		private final long generation;

		private final long forgotten;

		Take(Leases leases, Client client, long part, long sentNanos, long generation, long forgotten) {
			this.leases = leases;
			this.client = client;
			this.part = part;
			this.sentNanos = sentNanos;
			this.generation = generation;
			this.forgotten = forgotten;
		}

		/**
		 * Redis reserved the request's cost and the part: the part is the client's here from now on, until its end.
		 * @param reservation the reservation of both (cost plus part), settled when the part ends
		 * @return the verdict to answer the request with: each limit's remaining with the part counted as not spent
		 */
		Verdict taken(CompiledPolicy policy, Verdict verdict, Reservation reservation) {
			Part part = new Part(reservation, this.part, policy, verdict, this.sentNanos, this.generation);
			Part ended;
			boolean stale;
			synchronized (this.client) {
				this.client.remember(policy, verdict, this.sentNanos);
				ended = this.client.detach(this.client.part);
				this.client.part = part;
				stale = this.forgotten != this.client.forgotten;
			}
			this.leases.metrics.lease(reservation.routeId(), "taken");
			this.leases.giveBack(ended);
			if (stale || this.generation != this.leases.generation.get()) {
				// the policy changed (or every part went back), or an operator reset or blocked the client, while Redis
				// reserved this one
				this.leases.expire(this.client, part);
			}
			else {
				this.leases.timer.schedule(() -> this.leases.expire(this.client, part),
						Math.max(0, part.endNanos - this.leases.nanoTime.getAsLong()), TimeUnit.NANOSECONDS);
			}
			wake();
			return part.verdict(this.sentNanos);
		}

		/** Redis did not take the cost and the part together: the request is decided alone. */
		void refused(CompiledPolicy policy, String routeId, Verdict verdict) {
			synchronized (this.client) {
				this.client.remember(policy, verdict, this.sentNanos);
			}
			this.leases.metrics.lease(routeId, "refused");
			wake();
		}

		/** Redis could not decide (the fail-mode answers): the client's waiting requests go on. */
		void failed() {
			wake();
		}

		private void wake() {
			Sinks.Empty<Void> taking;
			synchronized (this.client) {
				taking = this.client.taking;
				this.client.taking = null;
			}
			if (taking != null) {
				taking.tryEmitEmpty();
			}
		}

	}

	/** Ends the part if it is still the client's: its time is up. */
	private void expire(Client client, Part part) {
		Part ended;
		synchronized (client) {
			ended = client.detach(client.part == part ? part : null);
		}
		giveBack(ended);
	}

	/** One client's counts and part, guarded by itself. */
	static final class Client {

		/** The units of the current lease time and the one before it: the client's recent rate. */
		long countedFrom;

		long counted;

		long previous;

		/**
		 * The least any limit had left as Redis last answered, when it was asked, and how long that held (to its
		 * window's end); -1: not known.
		 */
		long remaining;

		long remainingAt;

		long remainingFor = -1;

		Client(long now) {
			this.countedFrom = now;
		}

		@Nullable Part part;

		/** How often an operator's change of the client gave its part back: a part taken before is given back too. */
		long forgotten;

		/** Done when the part being taken arrives (or does not); null while none is. */
		Sinks.@Nullable Empty<Void> taking;

		void count(long now, long cost, long leaseNanos) {
			if (now - this.countedFrom >= leaseNanos) {
				this.previous = (now - this.countedFrom < 2 * leaseNanos) ? this.counted : 0;
				this.counted = 0;
				this.countedFrom = now;
			}
			this.counted += Math.max(cost, 1);
		}

		void remember(CompiledPolicy policy, Verdict verdict, long sentNanos) {
			long least = Long.MAX_VALUE;
			for (Decision decision : verdict.decisions()) {
				least = Math.min(least, decision.remaining());
			}
			this.remaining = least;
			this.remainingAt = sentNanos;
			// a fixed window's remaining holds to its end; a bucket's, the time it takes to fill (past it the bucket
			// is full, and a part of it could not be held: see Part.windowEnd)
			this.remainingFor = Part.windowEnd(policy, verdict.decisions());
		}

		/** Takes the part from the client, when it is still its own; returns it to be given back. */
		@Nullable Part detach(@Nullable Part part) {
			if (part != null && this.part == part) {
				this.part = null;
				return part;
			}
			return null;
		}

	}

	/** A part: units reserved in Redis with a request, admitted here until its end. */
	static final class Part {

		final Reservation reservation;

		final long size;

		/** Units of the part admitted so far, guarded by the client. */
		long used;

		/** Each limit's decision when the part was reserved, its remaining without the part. */
		private final List<Decision> decisions;

		private final long verdictNow;

		private final long sentNanos;

		final long endNanos;

		private final long generation;

		Part(Reservation reservation, long size, CompiledPolicy policy, Verdict verdict, long sentNanos, long generation) {
			this.reservation = reservation;
			this.size = size;
			this.decisions = verdict.decisions();
			this.verdictNow = verdict.now();
			this.sentNanos = sentNanos;
			this.generation = generation;
			// from when the take was sent, which is before Redis read its clock: the part never outlives its window
			this.endNanos = sentNanos + life(policy, this.decisions, size);
		}

		/**
		 * How long a part of {@code size} may be admitted from, after the decision that took it: at most the lease;
		 * no longer than the fixed window it was counted in; and no longer than its token bucket, with the part back
		 * in it, takes to be full again (see {@link #windowEnd}).
		 */
		static long life(CompiledPolicy policy, List<Decision> decisions, long size) {
			long life = policy.route.lease().toNanos();
			for (int i = 0; i < decisions.size(); i++) {
				WindowPolicy limit = policy.policies.get(i);
				long reset = TimeUnit.MILLISECONDS.toNanos(decisions.get(i).resetMillis());
				if (limit.algorithm() == Algorithm.FIXED_WINDOW) {
					life = Math.min(life, reset);
				}
				else if (limit.algorithm() == Algorithm.TOKEN_BUCKET) {
					life = Math.min(life, reset - refill(limit, size));
				}
			}
			return life;
		}

		/**
		 * Nanoseconds from the decision to the end of the first fixed window (or calendar period) it was counted
		 * in, or to when a token bucket it was counted in would be full again: a part reserved in one window is not
		 * admitted in the next, and none is admitted once its bucket, the part's unused units back in it, would be
		 * full. Held past that, the bucket would refill above its burst beside the units held here, and a client that
		 * paused and then spent both would pass burst + rate x time. {@link Long#MAX_VALUE} for no such limit.
		 */
		static long windowEnd(CompiledPolicy policy, List<Decision> decisions) {
			long end = Long.MAX_VALUE;
			for (int i = 0; i < decisions.size(); i++) {
				Algorithm algorithm = policy.policies.get(i).algorithm();
				if (algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.TOKEN_BUCKET) {
					end = Math.min(end, TimeUnit.MILLISECONDS.toNanos(decisions.get(i).resetMillis()));
				}
			}
			return end;
		}

		/** How long the policy's slowest-filling token bucket takes to refill {@code units}; 0 with no bucket. */
		static long bucketRefill(CompiledPolicy policy, long units) {
			long refill = 0;
			for (WindowPolicy limit : policy.policies) {
				if (limit.algorithm() == Algorithm.TOKEN_BUCKET) {
					refill = Math.max(refill, refill(limit, units));
				}
			}
			return refill;
		}

		/** How long the token bucket takes to refill {@code units}, in nanoseconds, rounded up. */
		private static long refill(WindowPolicy bucket, long units) {
			long window = TimeUnit.MILLISECONDS.toNanos(bucket.window().toMillis());
			return (window + bucket.limit() - 1) / bucket.limit() * units;
		}

		boolean admits(long cost, long now, long generation) {
			return now < this.endNanos && this.size - this.used >= cost && generation == this.generation;
		}

		/**
		 * The verdict of a request admitted from this part: each limit's remaining as Redis had it once the part was
		 * taken (the whole part counted as spent), less what this instance admitted of it since; each reset counted
		 * down from the decision. Never more than the truth on one instance, and on several more only by what the
		 * others admitted beyond this part's size since it was taken. (It may rise after the part: its unused units,
		 * given back, are left again in Redis's next answer.)
		 */
		Verdict verdict(long now) {
			long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(now - this.sentNanos);
			List<Decision> decisions = new ArrayList<>(this.decisions.size());
			for (Decision decision : this.decisions) {
				decisions.add(new Decision(true, Math.max(0, decision.remaining() - this.used),
						Math.max(0, decision.resetMillis() - elapsedMillis), 0));
			}
			return new Verdict(true, decisions, 0, this.verdictNow + elapsedMillis, 0);
		}

	}

}
