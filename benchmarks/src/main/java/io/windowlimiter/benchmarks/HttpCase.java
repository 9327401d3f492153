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
 * @param control whether the route is a second, identical copy of another case's (the A/A control: the two
 * differ by nothing but the run's noise)
 */
record HttpCase(String routeId, @Nullable Algorithm algorithm, boolean builtIn, boolean flood, long limit,
		Integration integration, boolean control) {

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

	HttpCase(String routeId, @Nullable Algorithm algorithm, boolean builtIn, boolean flood, long limit,
			Integration integration) {
		this(routeId, algorithm, builtIn, flood, limit, integration, false);
	}

	/** The route of the A/A control: the fixed window again, on a route of its own. */
	static final String CONTROL = "fixed-window-aa";

	/**
	 * The cases of part 2 (issue 47): no limiter, each algorithm on {@code RequestRateLimiter}, the fixed window again
	 * as the A/A control, the built-in; one client flooding the fixed window, the sliding window counter (the
	 * default) and the built-in. {@code BENCH_HTTP_CASES} (route ids, comma-separated) picks others of {@link #all()}.
	 */
	static List<HttpCase> measured() {
		List<HttpCase> all = new ArrayList<>(all());
		all.add(new HttpCase(CONTROL, Algorithm.FIXED_WINDOW, false, false, Settings.allowedLimit(),
				Integration.REQUEST_RATE_LIMITER, true));
		String chosen = Settings.string("http.cases", "none,fixed-window," + CONTROL + ",sliding-window-counter,"
				+ "sliding-log,sliding-log-sorted-set,token-bucket,built-in,flood-fixed-window,"
				+ "flood-sliding-window-counter,flood-built-in");
		List<HttpCase> cases = new ArrayList<>();
		for (String id : chosen.split(",")) {
			cases.add(all.stream()
				.filter(c -> c.routeId().equals(id.trim()))
				.findFirst()
				.orElseThrow(() -> new IllegalArgumentException("BENCH_HTTP_CASES: no case '" + id + "'; cases are "
						+ all.stream().map(HttpCase::routeId).toList())));
		}
		return cases;
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
		if (this.control) {
			label += " (A/A control)";
		}
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
