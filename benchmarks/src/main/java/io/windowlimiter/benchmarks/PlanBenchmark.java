package io.windowlimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.plan.PlanAssignments;
import reactor.core.publisher.Flux;

/**
 * Part 4: what plans cost a decision. The same two limits (a sliding window counter per route and a
 * fixed window in a scope) decided through {@link WindowRateLimiter#isAllowed}, with many decisions
 * in flight over 10,000 client keys, all allowed: written inline on the route, taken from the route's
 * default plan, and from a plan assigned to every client at run time (the in-memory lookup of
 * {@link PlanAssignments}). Each case gets its own route and scope, so none shares counters with
 * another. Rounds of the three cases in turn, each keeping its fastest.
 */
final class PlanBenchmark {

	/** One row of the results. */
	record Result(String name, double perSecond, long undecided) {
	}

	private static final String WINDOW = "1m";

	private final LocalRedis redis;

	private final int keys = Settings.integer("keys", 10_000);

	private final long limit = Settings.allowedLimit();

	private final int inFlight = Settings.integer("decision.in-flight", 256);

	private final Duration warmUp = Duration.ofSeconds(Settings.integer("decision.warmup-seconds", 2));

	private final Duration measure = Duration.ofSeconds(Settings.integer("decision.seconds", 4));

	private final int rounds = Settings.integer("decision.rounds", 2);

	PlanBenchmark(LocalRedis redis) {
		this.redis = redis;
	}

	String setup() {
		return String.format("`WindowRateLimiter.isAllowed` with %d decisions in flight, %,d client keys, two limits "
				+ "of %,d per %s (sliding-window-counter per route, fixed-window in a scope; all allowed), %d s after "
				+ "%d s warm-up, %d rounds, the fastest kept", this.inFlight, this.keys, this.limit, WINDOW,
				this.measure.toSeconds(), this.warmUp.toSeconds(), this.rounds);
	}

	List<Result> run() {
		Map<String, Object> plans = new LinkedHashMap<>();
		for (String plan : List.of("planned", "assigned")) {
			String limits = "window-rate-limiter.plans." + plan + ".limits";
			plans.put(limits + "[0].limit", Long.toString(this.limit));
			plans.put(limits + "[0].window", WINDOW);
			plans.put(limits + "[1].algorithm", "fixed-window");
			plans.put(limits + "[1].limit", Long.toString(this.limit));
			plans.put(limits + "[1].window", WINDOW);
			plans.put(limits + "[1].scope", "scope-" + plan);
		}
		List<Result> results = new ArrayList<>();
		try (Library library = new Library(LocalRedis.HOST, this.redis.port(), false, plans)) {
			WindowRateLimiter limiter = library.limiter();
			Map<String, Object> inline = new LinkedHashMap<>();
			inline.put("window-rate-limiter.limits[0].limit", Long.toString(this.limit));
			inline.put("window-rate-limiter.limits[0].window", WINDOW);
			inline.put("window-rate-limiter.limits[1].algorithm", "fixed-window");
			inline.put("window-rate-limiter.limits[1].limit", Long.toString(this.limit));
			inline.put("window-rate-limiter.limits[1].window", WINDOW);
			inline.put("window-rate-limiter.limits[1].scope", "scope-inline");
			library.configureRoute("inline", inline);
			// a route on "planned" by default; the assigned route's default is "planned" too, but every
			// client is assigned "assigned" on it, so each decision goes through the assignment lookup
			library.configureRoute("planned", Map.of("window-rate-limiter.plan", "planned"));
			library.configureRoute("assigned", Map.of("window-rate-limiter.plan", "planned"));
			PlanAssignments assignments = library.bean(PlanAssignments.class);
			Flux.range(0, this.keys)
				.flatMap(i -> assignments.assign("assigned", DecisionThroughputBenchmark.clientKey(i), "assigned", null),
						16)
				.blockLast(Duration.ofMinutes(2));
			for (String name : List.of("inline", "planned", "assigned")) {
				results.add(new Result(name, 0, 0));
			}
			for (int round = 0; round < this.rounds; round++) {
				for (int i = 0; i < results.size(); i++) {
					String route = results.get(i).name();
					timed(limiter, route, this.warmUp);
					Result run = timed(limiter, route, this.measure);
					Result best = results.get(i);
					results.set(i, new Result(route, Math.max(best.perSecond(), run.perSecond()),
							best.undecided() + run.undecided()));
				}
			}
			for (Result result : results) {
				System.out.printf("plans %-10s %,10.0f decisions/s  (not decided %,d)%n", result.name(),
						result.perSecond(), result.undecided());
			}
			Flux.range(0, this.keys)
				.flatMap(i -> assignments.clear("assigned", DecisionThroughputBenchmark.clientKey(i)), 16)
				.blockLast(Duration.ofMinutes(2));
		}
		this.redis.flushAll();
		return results;
	}

	private Result timed(WindowRateLimiter limiter, String routeId, Duration duration) {
		DecisionThroughputBenchmark.Timed run = DecisionThroughputBenchmark.timed(limiter, routeId, duration, this.keys,
				this.inFlight);
		return new Result(routeId, run.perSecond(), run.undecided());
	}

}
