package io.windowlimiter.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.WindowRateLimiter;
import org.jspecify.annotations.Nullable;

/**
 * Part 5: what a scope (a quota shared across routes) costs a decision. The same two limits (a sliding
 * window counter and a fixed window) decided through {@link WindowRateLimiter#isAllowed}, all allowed,
 * side by side ({@link SideBySideRoutes}): both the route's own, and the fixed window in a scope that a
 * second route names too, as a quota shared across routes is configured.
 */
final class ScopeBenchmark {

	private static final String WINDOW = "1m";

	private static final String SCOPE = "shared";

	private final LocalRedis redis;

	private final long limit = Settings.allowedLimit();

	private final SideBySideRoutes load = new SideBySideRoutes();

	ScopeBenchmark(LocalRedis redis) {
		this.redis = redis;
	}

	String setup() {
		return this.load.setup(String.format("two limits of %,d per %s (sliding-window-counter and fixed-window; all "
				+ "allowed), both the route's own (`own`) or the fixed window in scope `%s`, which another route names "
				+ "too (`scoped`)", this.limit, WINDOW, SCOPE));
	}

	List<SideBySideRoutes.Result> run() {
		List<SideBySideRoutes.Result> results;
		try (Library library = new Library(LocalRedis.HOST, this.redis.port())) {
			WindowRateLimiter limiter = library.limiter();
			library.configureRoute("own", limits(null));
			library.configureRoute("scoped", limits(SCOPE));
			// not measured: there so the scope is shared across routes, as users have it
			library.configureRoute("scoped-too", limits(SCOPE));
			results = this.load.run(limiter, List.of("own", "scoped"));
			for (SideBySideRoutes.Result result : results) {
				System.out.printf("scopes %-10s %,10.0f decisions/s  (not decided %,d)%n", result.name(),
						result.perSecond(), result.undecided());
			}
		}
		this.redis.flushAll();
		return results;
	}

	/** The route's arguments: a counter, and a fixed window in {@code scope} (null: the route's own). */
	private Map<String, Object> limits(@Nullable String scope) {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].limit", Long.toString(this.limit));
		args.put("window-rate-limiter.limits[0].window", WINDOW);
		args.put("window-rate-limiter.limits[1].algorithm", "fixed-window");
		args.put("window-rate-limiter.limits[1].limit", Long.toString(this.limit));
		args.put("window-rate-limiter.limits[1].window", WINDOW);
		if (scope != null) {
			args.put("window-rate-limiter.limits[1].scope", scope);
		}
		return args;
	}

}
