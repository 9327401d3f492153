package io.windowlimiter.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.core.plan.PlanAssignments;
import reactor.core.publisher.Flux;

/**
 * Part 4: what plans cost a decision. The same two limits (a sliding window counter per route and a
 * fixed window in a scope) decided through {@link WindowRateLimiter#isAllowed}, all allowed: written
 * inline on the route, taken from the route's default plan, and from a plan assigned to every client
 * at run time (the in-memory lookup of {@link PlanAssignments}), side by side ({@link SideBySideRoutes}).
 * Each case gets its own route and scope, so none shares counters with another.
 */
final class PlanBenchmark {

	private static final String WINDOW = "1m";

	private final LocalRedis redis;

	private final long limit = Settings.allowedLimit();

	private final SideBySideRoutes load = new SideBySideRoutes();

	PlanBenchmark(LocalRedis redis) {
		this.redis = redis;
	}

	String setup() {
		return this.load.setup(String.format("two limits of %,d per %s (sliding-window-counter per route, fixed-window "
				+ "in a scope; all allowed)", this.limit, WINDOW));
	}

	List<SideBySideRoutes.Result> run() {
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
		List<SideBySideRoutes.Result> results;
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
			Flux.range(0, this.load.keys())
				.flatMap(i -> assignments.assign("assigned", DecisionThroughputBenchmark.clientKey(i), "assigned", null),
						16)
				.blockLast(Duration.ofMinutes(2));
			results = this.load.run(limiter, List.of("inline", "planned", "assigned"));
			for (SideBySideRoutes.Result result : results) {
				System.out.printf("plans %-10s %,10.0f decisions/s  (not decided %,d)%n", result.name(),
						result.perSecond(), result.undecided());
			}
			Flux.range(0, this.load.keys())
				.flatMap(i -> assignments.clear("assigned", DecisionThroughputBenchmark.clientKey(i)), 16)
				.blockLast(Duration.ofMinutes(2));
		}
		this.redis.flushAll();
		return results;
	}

}
