package io.windowlimiter.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.windowlimiter.core.algorithm.Algorithm;
import org.jspecify.annotations.Nullable;

/**
 * One case of the HTTP benchmark: a gateway route (its id is also its path) and how it is loaded,
 * from 10,000 clients all within their limits or from one client flooding far over its limit.
 *
 * @param routeId the route, served at {@code /<routeId>/**}
 * @param algorithm our algorithm on the route, null for no limiter and for the built-in
 * @param builtIn whether the route uses the gateway's built-in {@code RedisRateLimiter}
 * @param flood whether one client floods it
 * @param limit our limiter's limit per minute; 0 for no limiter and for the built-in
 */
record HttpCase(String routeId, @Nullable Algorithm algorithm, boolean builtIn, boolean flood, long limit,
		Integration integration) {

	/** How our limiter is on the route. */
	enum Integration {

		/** The gateway's {@code RequestRateLimiter} filter with {@code #{@windowRateLimiter}}. */
		REQUEST_RATE_LIMITER,
		/** Our {@code WindowRateLimit} filter, no response-dependent settings: one Redis call per request. */
		FILTER,
		/**
		 * Our filter with {@code count-statuses: 4xx} while the downstream answers 200: every request is
		 * refunded, a second Redis call (the settle) per request.
		 */
		FILTER_SETTLING

	}

	HttpCase(String routeId, @Nullable Algorithm algorithm, boolean builtIn, boolean flood, long limit) {
		this(routeId, algorithm, builtIn, flood, limit, Integration.REQUEST_RATE_LIMITER);
	}

	static final String NONE = "none";

	static final String BUILT_IN = "built-in";

	/**
	 * No limiter, each algorithm, the sliding log again at its largest limit (issue 15 asks for it: a
	 * larger limit lets a client's log grow larger), the built-in; then the flood cases, ours and the
	 * built-in's.
	 */
	static List<HttpCase> all() {
		long allowed = Settings.allowedLimit();
		List<HttpCase> cases = new ArrayList<>();
		cases.add(new HttpCase(NONE, null, false, false, 0));
		for (Algorithm algorithm : Algorithm.rates()) {
			cases.add(new HttpCase(Algorithms.name(algorithm), algorithm, false, false, allowed));
		}
		for (Algorithm algorithm : Algorithm.rates()) {
			// the ring only: a sorted-set log is refused above 10,000 (one entry per unit of cost blocks Redis)
			if (algorithm == Algorithm.SLIDING_LOG && allowed != Algorithms.MAX_LOG_LIMIT) {
				cases.add(new HttpCase(Algorithms.name(algorithm) + "-" + Algorithms.MAX_LOG_LIMIT, algorithm, false,
						false, Algorithms.MAX_LOG_LIMIT));
			}
		}
		cases.add(new HttpCase(BUILT_IN, null, true, false, 0));
		// the WindowRateLimit filter at the default algorithm, against the same on RequestRateLimiter above
		Algorithm counter = Algorithm.SLIDING_WINDOW_COUNTER;
		cases.add(new HttpCase("filter-" + Algorithms.name(counter), counter, false, false, allowed,
				Integration.FILTER));
		cases.add(new HttpCase("filter-settle-" + Algorithms.name(counter), counter, false, false, allowed,
				Integration.FILTER_SETTLING));
		for (Algorithm algorithm : Algorithm.rates()) {
			cases.add(new HttpCase("flood-" + Algorithms.name(algorithm), algorithm, false, true,
					GatewayRoutes.FLOOD_LIMIT));
		}
		cases.add(new HttpCase("flood-" + BUILT_IN, null, true, true, 0));
		return cases;
	}

	/** {@code none}, {@code built-in} or the algorithm's name. */
	String limiter() {
		if (this.builtIn) {
			return BUILT_IN;
		}
		return (this.algorithm != null) ? Algorithms.name(this.algorithm) : NONE;
	}

	/** The report's name for the case: the limiter, with its limit when it is not the run's usual one. */
	String label() {
		boolean usual = !ours() || this.flood || this.limit == Settings.allowedLimit();
		String label = usual ? limiter() : String.format(Locale.ROOT, "%s at %,d/min", limiter(), this.limit);
		return switch (this.integration) {
			case REQUEST_RATE_LIMITER -> label;
			case FILTER -> label + ", WindowRateLimit filter";
			case FILTER_SETTLING -> label + ", WindowRateLimit filter settling every request";
		};
	}

	boolean ours() {
		return this.algorithm != null;
	}

	String path() {
		return "/" + this.routeId + "/bench";
	}

}
