package io.windowlimiter.core;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters of the limiter: {@code gateway.ratelimit.decisions} counts every answer by route,
 * algorithm and outcome; {@code gateway.ratelimit.redis} times the script round trip;
 * {@code gateway.ratelimit.plans.unknown} counts clients whose plan nobody declared;
 * {@code gateway.ratelimit.near_limit} counts allowed requests near a limit ({@link NearLimit});
 * {@code gateway.ratelimit.redis.shed} counts decisions given to the fail-mode because too many waited on Redis;
 * {@code gateway.ratelimit.settles} counts settles of reservations by result;
 * {@code gateway.ratelimit.releases} counts releases of concurrency slots by result;
 * {@code gateway.ratelimit.releases.given_up} the releases of the slots of decisions given up;
 * {@code gateway.ratelimit.releases.deferred} and {@code gateway.ratelimit.settles.deferred} the releases and
 * settles Redis could not take at first, sent again once it answered. Without a
 * registry it records nothing.
 */
public class RateLimitMetrics {

	/** What happened to a request. */
	public enum Outcome {

		/** Allowed by Redis. */
		ALLOWED,
		/** Refused: by Redis, or by the deny cache on Redis's earlier word. */
		DENIED,
		/** Would have been refused, but the route is in shadow mode. */
		SHADOWED,
		/** Redis could not decide and fail-mode open let the request through. */
		ERROR,
		/** Redis could not decide and fail-mode closed or local answered. */
		FALLBACK,
		/** Let through unlimited, without Redis: on an allow list, or exempted by an operator. */
		EXEMPT,
		/** Refused with 403, without Redis: on a deny list, or blocked by an operator. */
		BLOCKED;

		final String tag = name().toLowerCase();

	}

	/** Records nothing: for a gateway without Micrometer. */
	public static final RateLimitMetrics NONE = new RateLimitMetrics(null);

	private final @Nullable MeterRegistry registry;

	private final Map<String, Counter> counters = new ConcurrentHashMap<>();

	/** The meters every request touches, by route id alone: found without building a key or tags. */
	private final Map<String, RouteMeters> byRoute = new ConcurrentHashMap<>();

	public RateLimitMetrics(@Nullable MeterRegistry registry) {
		this.registry = registry;
	}

	public void decision(String route, String algorithm, Outcome outcome) {
		if (this.registry != null) {
			// registered once per route, algorithm and outcome: the registry's own lookup allocates tags every time
			Map<String, AtomicReferenceArray<Counter>> byAlgorithm = meters(route).decisions;
			AtomicReferenceArray<Counter> byOutcome = byAlgorithm.get(algorithm);
			if (byOutcome == null) {
				byOutcome = byAlgorithm.computeIfAbsent(algorithm,
						k -> new AtomicReferenceArray<>(Outcome.values().length));
			}
			Counter counter = byOutcome.get(outcome.ordinal());
			if (counter == null) {
				counter = Counter.builder("gateway.ratelimit.decisions")
					.description("Rate-limit answers by route, algorithm and outcome")
					.tags("route", route, "algorithm", algorithm, "outcome", outcome.tag)
					.register(this.registry);
				byOutcome.set(outcome.ordinal(), counter);
			}
			counter.increment();
		}
	}

	/** A client named a plan that is not declared, and got the route's default. */
	public void unknownPlan(String route) {
		if (this.registry != null) {
			this.counters.computeIfAbsent("unknown-plan\n" + route,
					k -> Counter.builder("gateway.ratelimit.plans.unknown")
						.description("Clients whose plan is not declared, decided by the route's default plan")
						.tags("route", route)
						.register(this.registry))
				.increment();
		}
	}

	/** An allowed request left its client at or beyond the near-limit share of a limit (see {@link NearLimit}). */
	public void nearLimit(String route) {
		if (this.registry != null) {
			RouteMeters meters = meters(route);
			Counter counter = meters.nearLimit;
			if (counter == null) {
				counter = Counter.builder("gateway.ratelimit.near_limit")
					.description("Allowed requests that left their client at or beyond the near-limit share of a limit")
					.tags("route", route)
					.register(this.registry);
				meters.nearLimit = counter;
			}
			counter.increment();
		}
	}

	/**
	 * An LLM call was answered 503 before admission: its body would have taken the instance's buffered bodies
	 * past {@code window-rate-limiter.llm.max-buffered-bytes}.
	 */
	public void bufferFull(String route) {
		if (this.registry != null) {
			this.counters.computeIfAbsent("buffer-full\n" + route,
					k -> Counter.builder("gateway.ratelimit.llm.buffer_full")
						.description("LLM calls answered 503 before admission: their body would have taken the "
								+ "instance's buffered request bodies past llm.max-buffered-bytes")
						.tags("route", route)
						.register(this.registry))
				.increment();
		}
	}

	/** A decision went to the route's fail-mode at once, because too many decisions waited on Redis. */
	public void shed(String route) {
		if (this.registry != null) {
			this.counters.computeIfAbsent("shed\n" + route,
					k -> Counter.builder("gateway.ratelimit.redis.shed")
						.description("Decisions given to the fail-mode at once because too many waited on Redis")
						.tags("route", route)
						.register(this.registry))
				.increment();
		}
	}

	/**
	 * A reservation's settle ended so ({@code applied}, {@code unchanged}, {@code duplicate}; {@code deferred}:
	 * Redis could not take it now, it is sent again once Redis answers; {@code dropped}: Redis could not take it
	 * nor was it kept, and the request stays charged what was reserved).
	 */
	public void settle(String route, String result) {
		if (this.registry != null) {
			// by route, then result: every LLM call settles, so no key is built per call
			meters(route).settles.computeIfAbsent(result,
					k -> Counter.builder("gateway.ratelimit.settles")
						.description("Settles of reservations by route and result; dropped: Redis could not take it")
						.tags("route", route, "result", result)
						.register(this.registry))
				.increment();
		}
	}

	/**
	 * A part of a hot client's quota leased from Redis ({@code lease}) was {@code taken} (reserved with a request),
	 * {@code refused} (Redis had not that much left: the request was decided alone) or {@code returned} (its unused
	 * units given back by a settle, whose outcome {@code gateway.ratelimit.settles} counts).
	 */
	public void lease(String route, String outcome) {
		if (this.registry != null) {
			meters(route).leases.computeIfAbsent(outcome,
					k -> Counter.builder("gateway.ratelimit.leases")
						.description("Parts of hot clients' quotas leased from Redis, by route and outcome")
						.tags("route", route, "outcome", outcome)
						.register(this.registry))
				.increment();
		}
	}

	/** A request was admitted from a part of its client's quota leased here, without Redis. */
	public void leaseLocal(String route) {
		if (this.registry != null) {
			RouteMeters meters = meters(route);
			Counter counter = meters.leasedAdmissions;
			if (counter == null) {
				counter = Counter.builder("gateway.ratelimit.leases.local")
					.description("Requests admitted from parts of their client's quota leased from Redis, by route")
					.tags("route", route)
					.register(this.registry);
				meters.leasedAdmissions = counter;
			}
			counter.increment();
		}
	}

	/**
	 * A request's concurrency slots were released so ({@code released}; {@code gone}: none was held any more,
	 * the response outlived the window; {@code deferred}: Redis could not take it now, it is sent again once
	 * Redis answers; {@code dropped}: Redis could not take it nor was it kept, the slots expire after their
	 * window).
	 */
	public void release(String route, String result) {
		if (this.registry != null) {
			this.counters.computeIfAbsent("release\n" + route + '\n' + result,
					k -> Counter.builder("gateway.ratelimit.releases")
						.description("Releases of concurrency slots by route and result; dropped: Redis could not take it")
						.tags("route", route, "result", result)
						.register(this.registry))
				.increment();
		}
	}

	/**
	 * A release Redis could not take at first ({@code deferred} in {@code gateway.ratelimit.releases}) was sent
	 * again once Redis answered: {@code released}, {@code gone} (none held: the first send had run on thawing, or
	 * the window ended), {@code dropped} (Redis could not take it then either; the slots expire after their window).
	 */
	public void deferredRelease(String route, String result) {
		if (this.registry != null) {
			this.counters.computeIfAbsent("deferred-release\n" + route + '\n' + result,
					k -> Counter.builder("gateway.ratelimit.releases.deferred")
						.description("Releases of concurrency slots Redis could not take at first, sent again once "
								+ "it answered, by route and result")
						.tags("route", route, "result", result)
						.register(this.registry))
				.increment();
		}
	}

	/**
	 * A settle Redis could not take at first ({@code deferred} in {@code gateway.ratelimit.settles}) was sent
	 * again once Redis answered: {@code applied}, {@code duplicate} (the first send had run on thawing),
	 * {@code dropped} (Redis could not take it then either, or it might have run too long ago to be told apart:
	 * the reservation stands as charged).
	 */
	public void deferredSettle(String route, String result) {
		if (this.registry != null) {
			this.counters.computeIfAbsent("deferred-settle\n" + route + '\n' + result,
					k -> Counter.builder("gateway.ratelimit.settles.deferred")
						.description("Settles Redis could not take at first, sent again once it answered, by route "
								+ "and result")
						.tags("route", route, "result", result)
						.register(this.registry))
				.increment();
		}
	}

	/**
	 * The concurrency slots of a decision the guard gave up (answered by the fail-mode while its script may yet
	 * run) were released so, once Redis answered again: {@code released} (its script had run and held them),
	 * {@code gone} (it held none), {@code dropped} (Redis could not take it; they expire after their window).
	 */
	public void givenUpRelease(String route, String result) {
		if (this.registry != null) {
			this.counters.computeIfAbsent("given-up-release\n" + route + '\n' + result,
					k -> Counter.builder("gateway.ratelimit.releases.given_up")
						.description("Releases of the concurrency slots of decisions given up (answered by the "
								+ "fail-mode) by route and result; dropped: Redis could not take it")
						.tags("route", route, "result", result)
						.register(this.registry))
				.increment();
		}
	}

	/**
	 * An LLM call of the route ended: {@code gateway.ratelimit.llm.tokens} counts the tokens estimated
	 * (reserved at admission) and settled (charged at the end); {@code gateway.ratelimit.llm.usage.missing}
	 * counts responses that ended without usage the gateway could read (charged the reservation).
	 * @param usage how the usage was read: reported, partial, error, none
	 */
	public void llmCall(String route, long estimated, long settled, String usage, boolean missing) {
		llmCall(route, OTHER_MODEL, estimated, settled, usage, missing);
	}

	/** The {@code model} tag of a call no limit with a model counted (see {@link Reservation#modelTag}). */
	public static final String OTHER_MODEL = "other";

	/**
	 * {@link #llmCall(String, long, long, String, boolean)} of a call counted as {@code model}: the tokens are
	 * tagged with it.
	 * @param model a configured model ({@link Reservation#modelTag}), never the client's text
	 */
	public void llmCall(String route, String model, long estimated, long settled, String usage, boolean missing) {
		if (this.registry != null) {
			// by route, then what is counted: found without building a key per call
			RouteMeters meters = meters(route);
			Map<String, Counter> llm = meters.llm;
			String other = OTHER_MODEL.equals(model) ? "" : "\n" + model;
			count(llm, "estimated" + other, "gateway.ratelimit.llm.tokens", "Tokens of LLM calls estimated at "
					+ "admission and settled at the end, by route and model", estimated, "route", route, "kind",
					"estimated", "model", model);
			count(llm, "settled" + other, "gateway.ratelimit.llm.tokens", "Tokens of LLM calls estimated at "
					+ "admission and settled at the end, by route and model", settled, "route", route, "kind",
					"settled", "model", model);
			count(meters.llmUsage, usage, "gateway.ratelimit.llm.responses",
					"LLM responses by route and how their usage was read", 1, "route", route, "usage", usage);
			if (missing) {
				count(llm, "missing", "gateway.ratelimit.llm.usage.missing",
						"LLM responses without usage the gateway could read, charged their reservation", 1, "route", route);
			}
		}
	}

	/**
	 * An LLM call counting money was settled: {@code gateway.ratelimit.llm.spend} counts, in US dollars, the price
	 * reserved at admission ({@code kind=estimated}) and charged at the end ({@code kind=settled}), by route and
	 * the price table's entry that priced it ({@code model}: a model, a pattern or {@code default}, as configured,
	 * so no client grows the meters by naming models).
	 */
	public void llmSpend(String route, String priceEntry, long estimatedMicroDollars, long settledMicroDollars) {
		if (this.registry != null) {
			Map<String, Counter> llm = meters(route).llm;
			spend(llm, route, priceEntry, "estimated", estimatedMicroDollars);
			spend(llm, route, priceEntry, "settled", settledMicroDollars);
		}
	}

	private void spend(Map<String, Counter> counters, String route, String entry, String kind, long microDollars) {
		MeterRegistry registry = this.registry;
		if (registry != null && microDollars > 0) {
			counters.computeIfAbsent("spend\n" + kind + "\n" + entry, k -> Counter.builder("gateway.ratelimit.llm.spend")
				.description("US dollars of LLM calls reserved at admission and charged at the end, by route and price")
				.baseUnit("usd")
				.tags("route", route, "kind", kind, "model", entry)
				.register(registry)).increment(microDollars / 1_000_000.0);
		}
	}

	private void count(Map<String, Counter> counters, String id, String name, String description, long amount,
			String... tags) {
		MeterRegistry registry = this.registry;
		if (registry != null && amount > 0) {
			Counter counter = counters.get(id);
			if (counter == null) {
				counter = counters.computeIfAbsent(id,
						k -> Counter.builder(name).description(description).tags(tags).register(registry));
			}
			counter.increment(amount);
		}
	}

	/** Starts timing a Redis round trip; {@code null} without a registry. */
	public Timer.@Nullable Sample startRedis() {
		return (this.registry != null) ? Timer.start(this.registry) : null;
	}

	public void stopRedis(Timer.@Nullable Sample sample, String route, boolean success) {
		if (sample != null && this.registry != null) {
			AtomicReferenceArray<Timer> timers = meters(route).redis;
			int index = success ? 0 : 1;
			Timer timer = timers.get(index);
			if (timer == null) {
				timer = Timer.builder("gateway.ratelimit.redis")
					.description("Round trip of the rate-limit script to Redis")
					// buckets, so dashboards can show p99 across instances
					.publishPercentileHistogram()
					.tags("route", route, "result", success ? "success" : "failure")
					.register(this.registry);
				timers.set(index, timer);
			}
			sample.stop(timer);
		}
	}

	private RouteMeters meters(String route) {
		RouteMeters meters = this.byRoute.get(route);
		return (meters != null) ? meters : this.byRoute.computeIfAbsent(route, k -> new RouteMeters());
	}

	/**
	 * One route's request-path meters, each registered on first use (a race registers the same meter twice:
	 * the registry hands both the one it holds).
	 */
	private static final class RouteMeters {

		/** Decision counters by the route's algorithms, then by {@link Outcome#ordinal()}. */
		final Map<String, AtomicReferenceArray<Counter>> decisions = new ConcurrentHashMap<>();

		/** The Redis round trip's timers: success, failure. */
		final AtomicReferenceArray<Timer> redis = new AtomicReferenceArray<>(2);

		volatile @Nullable Counter nearLimit;

		/** Settle counters by result. */
		final Map<String, Counter> settles = new ConcurrentHashMap<>();

		/** Lease counters by outcome, and the requests admitted from leased parts. */
		final Map<String, Counter> leases = new ConcurrentHashMap<>();

		volatile @Nullable Counter leasedAdmissions;

		/** LLM token and missing-usage counters, by what they count. */
		final Map<String, Counter> llm = new ConcurrentHashMap<>();

		/** LLM response counters by how their usage was read. */
		final Map<String, Counter> llmUsage = new ConcurrentHashMap<>();

	}

}
