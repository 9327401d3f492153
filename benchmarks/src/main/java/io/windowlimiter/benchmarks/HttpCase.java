package io.windowlimiter.benchmarks;

import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.gateway.algorithm.Algorithm;
import org.jspecify.annotations.Nullable;

/**
 * One case of the HTTP benchmark: a gateway route (its id is also its path) and how it is loaded,
 * from 10,000 clients all within their limits or from one client flooding far over its limit.
 *
 * @param routeId the route, served at {@code /<routeId>/**}
 * @param algorithm our algorithm on the route, null for no limiter and for the built-in
 * @param builtIn whether the route uses the gateway's built-in {@code RedisRateLimiter}
 * @param flood whether one client floods it
 */
record HttpCase(String routeId, @Nullable Algorithm algorithm, boolean builtIn, boolean flood) {

	static final String NONE = "none";

	static final String BUILT_IN = "built-in";

	/** No limiter, each algorithm, the built-in; then the flood cases, ours and the built-in's. */
	static List<HttpCase> all() {
		List<HttpCase> cases = new ArrayList<>();
		cases.add(new HttpCase(NONE, null, false, false));
		for (Algorithm algorithm : Algorithm.values()) {
			cases.add(new HttpCase(Algorithms.name(algorithm), algorithm, false, false));
		}
		cases.add(new HttpCase(BUILT_IN, null, true, false));
		for (Algorithm algorithm : Algorithm.values()) {
			cases.add(new HttpCase("flood-" + Algorithms.name(algorithm), algorithm, false, true));
		}
		cases.add(new HttpCase("flood-" + BUILT_IN, null, true, true));
		return cases;
	}

	/** {@code none}, {@code built-in} or the algorithm's name. */
	String limiter() {
		if (this.builtIn) {
			return BUILT_IN;
		}
		return (this.algorithm != null) ? Algorithms.name(this.algorithm) : NONE;
	}

	boolean ours() {
		return this.algorithm != null;
	}

	String path() {
		return "/" + this.routeId + "/bench";
	}

}
