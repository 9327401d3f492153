package io.windowlimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.windowlimiter.core.algorithm.Algorithm;
import org.jspecify.annotations.Nullable;

/**
 * One case of the lease part (issue 46): a gateway route (its id is also its path), how it limits, whether it leases,
 * and how it is loaded and judged.
 *
 * @param routeId the route, served at {@code /<routeId>/**}
 * @param kind what the case measures
 * @param algorithm the fixed window or the token bucket
 * @param limit the limit per window (the token bucket: its rate, {@code limit} per {@code window})
 * @param window the window, e.g. {@code 1m}
 * @param burst the token bucket's burst, null for the fixed window
 * @param lease the route's {@code lease}, null for none (no leases, as before issue 46)
 * @param clients how many client keys the load spreads over (1: one hot client)
 * @param filter whether the route uses the {@code WindowRateLimit} filter rather than {@code RequestRateLimiter}
 */
record LeaseCase(String routeId, Kind kind, Algorithm algorithm, long limit, String window, @Nullable Long burst,
		@Nullable String lease, int clients, boolean filter) {

	/** What a case measures. */
	enum Kind {

		/** Req/s, Redis scripts and gateway CPU per request, limits never reached: rounds side by side. */
		THROUGHPUT,
		/** Requests that reached the downstream in each fixed window of {@code window}, under full load. */
		WINDOWS,
		/** The token bucket's bound, burst + rate x time, checked on every prefix of the downstream's timestamps. */
		BOUND

	}

	static final String SPREAD = "spread";

	/** Not a route: the cold client beside a hot one on a Redis Cluster ({@link ColdClientBenchmark}). */
	static final String CLUSTER = "cluster-cold";

	static final String HOT_LEASE = "hot-lease";

	/** The lease of every leasing case. */
	static final String LEASE = "50ms";

	/** A fixed window no client reaches. */
	static final long NEVER_REACHED = 1_000_000_000L;

	/**
	 * A token bucket the hot client drains (1,000 a second, slower than wrk sends) from a burst of 1,000,000,000 it
	 * never empties: a bucket leases only while it is drained, a part ending when the bucket, the part back in it,
	 * would be full again (docs/hot-clients.md); one its client keeps full leases nothing.
	 */
	static final long DRAINED_RATE = 60_000L;

	static final long HUGE_BURST = 1_000_000_000L;

	/** The exact cases' limit per 10 s, and the least the issue allows a leasing window to admit. */
	static final long EXACT_LIMIT = 3_000;

	static final long EXACT_LEAST = 2_850;

	/**
	 * All cases in the order the report lists them. {@code BENCH_LEASE_CASES} (route ids, comma-separated) picks some,
	 * e.g. those without {@code lease} on code that does not have it yet; {@link #CLUSTER} among them is not a route
	 * here but {@link ColdClientBenchmark}.
	 */
	static List<LeaseCase> chosen() {
		List<LeaseCase> all = List.of(
				new LeaseCase(SPREAD, Kind.THROUGHPUT, Algorithm.FIXED_WINDOW, NEVER_REACHED, "1m", null, null, 10_000,
						false),
				new LeaseCase("hot", Kind.THROUGHPUT, Algorithm.FIXED_WINDOW, NEVER_REACHED, "1m", null, null, 1, false),
				new LeaseCase(HOT_LEASE, Kind.THROUGHPUT, Algorithm.FIXED_WINDOW, NEVER_REACHED, "1m", null, LEASE, 1,
						false),
				new LeaseCase("hot-lease-token-bucket", Kind.THROUGHPUT, Algorithm.TOKEN_BUCKET, DRAINED_RATE, "1m",
						HUGE_BURST, LEASE, 1, false),
				new LeaseCase("exact", Kind.WINDOWS, Algorithm.FIXED_WINDOW, EXACT_LIMIT, "10s", null, LEASE, 1, true),
				new LeaseCase("exact-no-lease", Kind.WINDOWS, Algorithm.FIXED_WINDOW, EXACT_LIMIT, "10s", null, null, 1,
						true),
				new LeaseCase("token-bucket-bound", Kind.BOUND, Algorithm.TOKEN_BUCKET, 500, "1s", 1_000L, LEASE, 1,
						true),
				new LeaseCase("token-bucket-bound-no-lease", Kind.BOUND, Algorithm.TOKEN_BUCKET, 500, "1s", 1_000L, null,
						1, true));
		String given = Settings.string("lease.cases", "");
		if (given.isEmpty()) {
			return all;
		}
		List<LeaseCase> cases = new ArrayList<>();
		for (String id : given.split(",")) {
			if (id.trim().equals(CLUSTER)) {
				continue;
			}
			cases.add(all.stream()
				.filter(c -> c.routeId().equals(id.trim()))
				.findFirst()
				.orElseThrow(() -> new IllegalArgumentException("BENCH_LEASE_CASES: no case '" + id + "'; cases are "
						+ all.stream().map(LeaseCase::routeId).toList() + " and " + CLUSTER)));
		}
		return cases;
	}

	/** Whether {@code BENCH_LEASE_CASES} (all by default) asks for the cluster case, {@link ColdClientBenchmark}. */
	static boolean clusterChosen() {
		String given = Settings.string("lease.cases", "");
		return given.isEmpty() || List.of(given.replace(" ", "").split(",")).contains(CLUSTER);
	}

	String path() {
		return "/" + this.routeId + "/bench";
	}

	/** The window in milliseconds ({@code 10s}, {@code 1s} or {@code 1m}). */
	long windowMillis() {
		return Duration.parse("PT" + this.window.toUpperCase(Locale.ROOT)).toMillis();
	}

	/** How the route limits, for the report: "fixed window 3,000 per 10s, lease 50ms, WindowRateLimit". */
	String limits() {
		String limits = (this.algorithm == Algorithm.TOKEN_BUCKET)
				? String.format(Locale.ROOT, "token bucket %,d per %s, burst %,d", this.limit, this.window,
						this.burst)
				: String.format(Locale.ROOT, "fixed window %,d per %s", this.limit, this.window);
		return limits + ((this.lease != null) ? ", lease " + this.lease : ", no lease")
				+ (this.filter ? ", WindowRateLimit" : ", RequestRateLimiter");
	}

	/** The route arguments, prefixed {@code window-rate-limiter.} as {@code RequestRateLimiter} takes them. */
	Map<String, Object> routeArgs() {
		Map<String, Object> args = new LinkedHashMap<>(Algorithms.routeArgs(this.algorithm, this.limit, this.window));
		if (this.burst != null) {
			args.put("window-rate-limiter.burst", this.burst);
		}
		if (this.lease != null) {
			args.put("window-rate-limiter.lease", this.lease);
		}
		return args;
	}

	/**
	 * The gateway configuration of {@code cases} (and {@code none}, a route without a limiter the gateway's readiness is
	 * checked on), as YAML for gateway-app's {@code --spring.config.additional-location}; clients by {@code X-API-Key}.
	 */
	static String yaml(List<LeaseCase> cases) {
		StringBuilder yaml = new StringBuilder();
		yaml.append("# Written by the lease benchmark (LeaseCase.java); bench.downstream comes on the command line\n");
		yaml.append("logging.level.root: WARN\n");
		yaml.append("spring.cloud.gateway.server.webflux.routes:\n");
		yaml.append("  - id: none\n    uri: ${bench.downstream}\n    predicates: [ \"Path=/none/**\" ]\n");
		for (LeaseCase c : cases) {
			yaml.append("  - id: ").append(c.routeId()).append('\n');
			yaml.append("    uri: ${bench.downstream}\n");
			yaml.append("    predicates: [ \"Path=/").append(c.routeId()).append("/**\" ]\n");
			yaml.append("    filters:\n");
			yaml.append("      - name: ").append(c.filter() ? "WindowRateLimit" : "RequestRateLimiter").append('\n');
			yaml.append("        args:\n");
			yaml.append("          key-resolver: \"#{@headerKeyResolver}\"\n");
			if (!c.filter()) {
				yaml.append("          rate-limiter: \"#{@windowRateLimiter}\"\n");
			}
			c.routeArgs().forEach((name, value) -> yaml.append("          ")
				.append(c.filter() ? name.substring("window-rate-limiter.".length()) : name)
				.append(": ")
				.append(value)
				.append('\n'));
		}
		return yaml.toString();
	}

}
