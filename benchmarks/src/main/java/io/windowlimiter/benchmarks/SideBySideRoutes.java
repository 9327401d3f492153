package io.windowlimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.gateway.WindowRateLimiter;

/**
 * Decisions per second of a few routes, compared in one run: the decision benchmark's timed loop on
 * each route in turn (many decisions in flight over 10,000 client keys), for rounds, each route keeping
 * its fastest round, so that other work on the machine, which only slows a round down, favours none.
 * The load of the plans and scopes parts.
 */
final class SideBySideRoutes {

	/** One route's row: its fastest round, and the decisions not allowed or not decided in all rounds. */
	record Result(String name, double perSecond, long undecided) {
	}

	private final int keys = Settings.integer("keys", 10_000);

	private final int inFlight = Settings.integer("decision.in-flight", 256);

	private final Duration warmUp = Duration.ofSeconds(Settings.integer("decision.warmup-seconds", 2));

	private final Duration measure = Duration.ofSeconds(Settings.integer("decision.seconds", 4));

	private final int rounds = Settings.integer("decision.rounds", 2);

	/** The client keys, the same as the decision benchmark's. */
	int keys() {
		return this.keys;
	}

	/** How the load is made, for the report: "... 10,000 client keys, <limits>, 4 s after ...". */
	String setup(String limits) {
		return String.format("`WindowRateLimiter.isAllowed` with %d decisions in flight, %,d client keys, %s, %d s after "
				+ "%d s warm-up, %d rounds, the fastest kept", this.inFlight, this.keys, limits, this.measure.toSeconds(),
				this.warmUp.toSeconds(), this.rounds);
	}

	/** The routes' rows, in the order given. */
	List<Result> run(WindowRateLimiter limiter, List<String> routeIds) {
		List<Result> results = new ArrayList<>();
		for (String routeId : routeIds) {
			results.add(new Result(routeId, 0, 0));
		}
		for (int round = 0; round < this.rounds; round++) {
			for (int i = 0; i < results.size(); i++) {
				String routeId = results.get(i).name();
				timed(limiter, routeId, this.warmUp);
				DecisionThroughputBenchmark.Timed run = timed(limiter, routeId, this.measure);
				Result best = results.get(i);
				results.set(i, new Result(routeId, Math.max(best.perSecond(), run.perSecond()),
						best.undecided() + run.undecided()));
			}
		}
		return results;
	}

	private DecisionThroughputBenchmark.Timed timed(WindowRateLimiter limiter, String routeId, Duration duration) {
		return DecisionThroughputBenchmark.timed(limiter, routeId, duration, this.keys, this.inFlight);
	}

}
