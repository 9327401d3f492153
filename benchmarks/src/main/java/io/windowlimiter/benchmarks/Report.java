package io.windowlimiter.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * The results of one run as Markdown: the machine, each part's table, and the targets with
 * whether each is met and by how much. Every ratio compares figures measured in this one run.
 */
final class Report {

	/** Bytes per client at 100 requests per minute the issue allows, by algorithm id. */
	static final Map<String, Long> MEMORY_TARGETS = Map.of("fixed-window", 120L, "sliding-window-counter", 150L,
			"sliding-log", 1_200L);

	/** The sliding log at 10,000 requests per minute: 120 KB, taken as 120,000 bytes. */
	static final long HEAVY_LOG_TARGET = 120_000L;

	/** Issue 15: library decisions/s over redis-benchmark -P 16 on the same script, per algorithm. */
	static final double DECISION_TARGET = 0.90;

	/** Issue 15: HTTP req/s over the built-in RedisRateLimiter's, every algorithm. */
	static final double VS_BUILT_IN_TARGET = 1.5;

	/** Issue 15: HTTP req/s over no limiter's, every algorithm (the sliding log at 1,000,000 included). */
	static final double VS_NONE_TARGET = 0.85;

	/** Issue 47: one client flooding over its limit, req/s over the built-in's flooded. */
	static final double FLOOD_TARGET = 3.0;

	/** Issue 47: the gateway's CPU per allowed request over no limiter's, every algorithm, microseconds. */
	static final double GATEWAY_MICROS_TARGET = 15;

	/** Issue 47: Redis's CPU per decision under the HTTP load, every algorithm, microseconds. */
	static final double REDIS_MICROS_TARGET = 12;

	private final Machine machine;

	private final String command;

	private List<DecisionThroughputBenchmark.Result> decisions = List.of();

	private String decisionSetup = "";

	private List<HttpBenchmark.Result> http = List.of();

	private String httpSetup = "";

	private List<MemoryBenchmark.Result> memory = List.of();

	private List<SideBySideRoutes.Result> plans = List.of();

	private String plansSetup = "";

	private List<SideBySideRoutes.Result> scopes = List.of();

	private String scopesSetup = "";

	private List<HotClientBenchmark.Result> hot = List.of();

	private String hotSetup = "";

	private List<ProfileBenchmark.Result> profile = List.of();

	private String profileSetup = "";

	private LeaseBenchmark.Results leases = new LeaseBenchmark.Results(List.of(), List.of(), List.of());

	private String leasesSetup = "";

	private List<ColdClientBenchmark.Phase> leaseCluster = List.of();

	private String leaseClusterSetup = "";

	private final List<String[]> targets = new ArrayList<>();

	Report(Machine machine, String command) {
		this.machine = machine;
		this.command = command;
	}

	Machine machine() {
		return this.machine;
	}

	void decisions(List<DecisionThroughputBenchmark.Result> results, String setup) {
		this.decisions = results;
		this.decisionSetup = setup;
	}

	void http(List<HttpBenchmark.Result> results, String setup) {
		this.http = results;
		this.httpSetup = setup;
	}

	void memory(List<MemoryBenchmark.Result> results) {
		this.memory = results;
	}

	void plans(List<SideBySideRoutes.Result> results, String setup) {
		this.plans = results;
		this.plansSetup = setup;
	}

	void scopes(List<SideBySideRoutes.Result> results, String setup) {
		this.scopes = results;
		this.scopesSetup = setup;
	}

	void hot(List<HotClientBenchmark.Result> results, String setup) {
		this.hot = results;
		this.hotSetup = setup;
	}

	void profile(List<ProfileBenchmark.Result> results, String setup) {
		this.profile = results;
		this.profileSetup = setup;
	}

	void leases(LeaseBenchmark.Results results, String setup) {
		this.leases = results;
		this.leasesSetup = setup;
	}

	void leaseCluster(List<ColdClientBenchmark.Phase> phases, String setup) {
		this.leaseCluster = phases;
		this.leaseClusterSetup = setup;
	}

	String markdown() {
		this.targets.clear();
		StringBuilder md = new StringBuilder();
		md.append("# Benchmark results, ").append(this.machine.dateText()).append("\n\n");
		md.append("- machine: ").append(this.machine.cores()).append(" cores (nproc), ").append(this.machine.cpu())
			.append(", ").append(this.machine.memory()).append(" RAM, ").append(this.machine.os()).append('\n');
		md.append("- software: ").append(this.machine.java()).append(", ").append(this.machine.redis()).append(", ")
			.append(this.machine.wrk()).append('\n');
		md.append("- code: ").append(this.machine.commit()).append('\n');
		md.append("- command: `").append(this.command).append("`\n");
		md.append("- limiter settings: ")
			.append(Settings.redisTimeout().isEmpty() ? "defaults"
					: "defaults, but `window-rate-limiter.redis-timeout=" + Settings.redisTimeout() + "`")
			.append('\n');
		md.append("- load average (1, 5, 15 min): ").append(this.machine.loadAtStart()).append(" at the start, ")
			.append(Machine.loadAverage()).append(" at the end (cores are shared with other work on the machine)\n");
		md.append("- Redis, the load generators and the code measured share the machine's cores; compare ratios, "
				+ "not absolute figures, across machines.\n\n");
		String parts = decisionTable() + httpTables() + memoryTable()
				+ sideBySideTable("4. Plans: the same limits inline, from a plan, from an assignment", this.plans,
						this.plansSetup)
				+ sideBySideTable("5. Scopes: the same limits the route's own and in a scope shared across routes",
						this.scopes, this.scopesSetup)
				+ hotTable() + profileTables() + leaseTables();
		md.append("## Targets\n\n| target | measured | goal | verdict |\n|---|---|---|---|\n");
		for (String[] row : this.targets) {
			md.append("| ").append(String.join(" | ", row)).append(" |\n");
		}
		md.append('\n').append(parts);
		return md.toString();
	}

	private String decisionTable() {
		if (this.decisions.isEmpty()) {
			return "";
		}
		StringBuilder md = new StringBuilder("## 1. Decision throughput (library alone, no HTTP)\n\n");
		md.append(this.decisionSetup).append(".\n\n");
		md.append("| algorithm | library, decisions/s | redis-benchmark -P 16 | redis-benchmark -P 1 | library / -P 16 |"
				+ " library / -P 1 |\n|---|---:|---:|---:|---:|---:|\n");
		for (DecisionThroughputBenchmark.Result r : this.decisions) {
			String name = Algorithms.name(r.algorithm());
			md.append(String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | %,.0f | %.2f | %.2f |%n", name,
					r.libraryPerSecond(), r.redisPipelined(), r.redisUnpipelined(), r.ratioToPipelined(),
					r.libraryPerSecond() / r.redisUnpipelined()));
			atLeast("decisions/s, " + name + ", library / redis-benchmark -P 16", r.ratioToPipelined(), DECISION_TARGET);
			if (r.undecided() > 0) {
				this.targets.add(new String[] { "decisions, " + name, r.undecided() + " not allowed or not decided",
						"0", "**invalid run**" });
			}
		}
		return md.append('\n').toString();
	}

	private String hotTable() {
		if (this.hot.isEmpty()) {
			return "";
		}
		StringBuilder md = new StringBuilder("## 6. One hot client: every decision on one key\n\n");
		md.append(this.hotSetup).append(".\n\n| algorithm | library, 10,000 keys | library, one key | one key / 10,000 |"
				+ " redis-benchmark -P 16, 10,000 keys | redis-benchmark -P 16, one key | one key / 10,000 |"
				+ " library / -P 16, one key |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
		for (HotClientBenchmark.Result r : this.hot) {
			DecisionThroughputBenchmark.Result many = r.manyKeys();
			DecisionThroughputBenchmark.Result one = r.oneKey();
			String name = Algorithms.name(r.algorithm());
			md.append(String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | %.2f | %,.0f | %,.0f | %.2f | %.2f |%n", name,
					many.libraryPerSecond(), one.libraryPerSecond(), one.libraryPerSecond() / many.libraryPerSecond(),
					many.redisPipelined(), one.redisPipelined(), one.redisPipelined() / many.redisPipelined(),
					one.ratioToPipelined()));
			long undecided = many.undecided() + one.undecided();
			if (undecided > 0) {
				this.targets.add(new String[] { "hot client, " + name, undecided + " not allowed or not decided", "0",
						"**invalid run**" });
			}
		}
		return md.append('\n').toString();
	}

	/** Routes decided side by side, each against the first. */
	private String sideBySideTable(String title, List<SideBySideRoutes.Result> results, String setup) {
		if (results.isEmpty()) {
			return "";
		}
		StringBuilder md = new StringBuilder("## ").append(title).append("\n\n");
		md.append(setup).append(".\n\n| limits | decisions/s | vs ").append(results.get(0).name())
			.append(" | not decided |\n|---|---:|---:|---:|\n");
		double first = results.get(0).perSecond();
		for (SideBySideRoutes.Result r : results) {
			md.append(String.format(Locale.ROOT, "| %s | %,.0f | %.2f | %d |%n", r.name(), r.perSecond(),
					r.perSecond() / first, r.undecided()));
			if (r.undecided() > 0) {
				this.targets.add(new String[] { "decisions, " + r.name(), r.undecided() + " not allowed or not decided",
						"0", "**invalid run**" });
			}
		}
		return md.append('\n').toString();
	}

	private String profileTables() {
		if (this.profile.isEmpty()) {
			return "";
		}
		StringBuilder md = new StringBuilder("## 7. Where a request's CPU goes\n\n").append(this.profileSetup)
			.append(".\n\nCPU per request by process, in microseconds (all share the machine's cores, so with them "
					+ "saturated req/s follows 1 / total), from the run without the profiler. One run per case in a fixed "
					+ "order: its req/s and ratios are rougher than part 2's, which rotates the order over rounds of 30 s "
					+ "and takes medians of each round's ratios; this part says where the CPU goes. Req/s under the "
					+ "profiler shows the "
					+ "profiler's own cost:\n\n| limiter | req/s | vs no limiter | gateway | Redis | "
					+ "downstream | wrk | total | no limiter's total / total | req/s profiled | flame graph |\n"
					+ "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
		ProfileBenchmark.Result none = this.profile.get(0);
		for (ProfileBenchmark.Result r : this.profile) {
			Map<String, Double> p = r.processMicros();
			md.append(String.format(Locale.ROOT, "| %s | %,.0f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %,.0f | [%s](profiles/%s) |%n",
					r.httpCase().label(), r.perSecond(), r.perSecond() / none.perSecond(), p.get("gateway"), p.get("Redis"),
					p.get("downstream"), p.get("wrk"), r.totalMicros(), none.totalMicros() / r.totalMicros(),
					r.profiledPerSecond(), r.flameGraph().getFileName(), r.flameGraph().getFileName()));
		}
		md.append("\nThe gateway's CPU per request split by the profiler's samples, each going to the component of its "
				+ "innermost frame that has one, in microseconds, and what each limiter adds to no limiter's:\n\n| component |");
		for (ProfileBenchmark.Result r : this.profile) {
			md.append(' ').append(r.httpCase().label()).append(" |");
		}
		md.append("\n|---|").append("---:|".repeat(this.profile.size())).append('\n');
		for (String component : none.componentMicros().keySet()) {
			md.append("| ").append(component).append(" |");
			double base = none.componentMicros().get(component);
			for (ProfileBenchmark.Result r : this.profile) {
				md.append(' ').append(withExtra(r.componentMicros().get(component), base, r == none)).append(" |");
			}
			md.append('\n');
		}
		md.append("| **gateway, all** |");
		double baseTotal = sum(none.componentMicros());
		for (ProfileBenchmark.Result r : this.profile) {
			md.append(" **").append(withExtra(sum(r.componentMicros()), baseTotal, r == none)).append("** |");
		}
		md.append("\n| through this library (inclusive) |");
		for (ProfileBenchmark.Result r : this.profile) {
			md.append(String.format(Locale.ROOT, " %.1f |", r.libraryInclusiveMicros()));
		}
		md.append("\n| through Lettuce (inclusive) |");
		for (ProfileBenchmark.Result r : this.profile) {
			md.append(String.format(Locale.ROOT, " %.1f |", r.lettuceInclusiveMicros()));
		}
		return md.append("\n\n").toString();
	}

	/** Part 8, issue 46's targets: scripts per request, the hot key against 10,000, exact windows and bucket. */
	private String leaseTables() {
		LeaseBenchmark.Results r = this.leases;
		if (r.throughput().isEmpty() && r.windows().isEmpty() && r.bounds().isEmpty() && this.leaseCluster.isEmpty()) {
			return "";
		}
		StringBuilder md = new StringBuilder("## 8. Hot-client leases: two instances on one Redis\n\n");
		if (!this.leasesSetup.isEmpty()) {
			md.append(this.leasesSetup).append(".\n\n");
		}
		Optional<LeaseBenchmark.Throughput> spread = r.throughput().stream()
			.filter(t -> t.leaseCase().routeId().equals(LeaseCase.SPREAD))
			.findFirst();
		if (!r.throughput().isEmpty()) {
			md.append("Throughput, limits never reached (medians over rounds; vs spread: this case's req/s over spread's "
					+ "in the same round; leases: taken / returned / refused, and the requests admitted from them, in "
					+ "all measured rounds):\n\n| case | client keys | limits | req/s | vs spread | p99 ms | Redis scripts "
					+ "per request | gateway CPU per request, us | Redis CPU per request, us | leases | admitted from a "
					+ "lease | req/s per round |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---|\n");
			for (LeaseBenchmark.Throughput t : r.throughput()) {
				LeaseBenchmark.Leases l = t.leases();
				md.append(String.format(Locale.ROOT, "| %s | %,d | %s | %,.0f | %s | %.2f | %.3f | %.1f | %.1f | %s | "
						+ "%s | %s |%n", t.leaseCase().routeId(), t.leaseCase().clients(), t.leaseCase().limits(),
						t.median(LeaseBenchmark.Round::perSecond), spread.map(s -> spread(t.rateRatios(s))).orElse(""),
						t.median(LeaseBenchmark.Round::p99Millis), t.median(LeaseBenchmark.Round::scriptsPerRequest),
						t.median(LeaseBenchmark.Round::gatewayMicros), t.median(LeaseBenchmark.Round::redisMicros),
						leaseCounts(t.leaseCase(), l), leaseShare(t.leaseCase(), l.local(), t.requests()),
						String.join(", ", t.rounds().stream()
							.map(x -> String.format(Locale.ROOT, "%,.0f", x.perSecond()))
							.toList())));
				if (t.leaseCase().lease() != null) {
					atMost("Redis scripts per request, " + t.leaseCase().routeId(),
							t.median(LeaseBenchmark.Round::scriptsPerRequest), 0.1,
							String.format(Locale.ROOT, "%.3f", t.median(LeaseBenchmark.Round::scriptsPerRequest)),
							"<= 0.1");
				}
				if (t.leaseCase().routeId().equals(LeaseCase.HOT_LEASE) && spread.isPresent()) {
					atLeast("req/s, hot-lease (one key) / spread (10,000 keys, no lease)",
							SseBenchmark.median(t.rateRatios(spread.get())), 1.0);
				}
				invalidIfFailed(t.leaseCase(), t.failedDecisions());
			}
			md.append('\n');
		}
		if (!r.windows().isEmpty()) {
			md.append("Fixed windows under full load: requests that reached the downstream in each full window aligned "
					+ "to the epoch (Redis's windows; same machine clock); the most it saw in the "
					+ LeaseBenchmark.BOUNDARY_MILLIS + " ms before a counted window (0: no request decided near a "
					+ "window's end, where the time to nginx could carry it into the next); against what wrk counted "
					+ "as 2xx:\n\n| case | limits | full windows | min | max | counts, window by window | before a window "
					+ "| downstream saw / wrk's 2xx | requests | leases | admitted from a lease |\n"
					+ "|---|---|---:|---:|---:|---|---:|---|---:|---|---:|\n");
			for (LeaseBenchmark.Windows w : r.windows()) {
				md.append(String.format(Locale.ROOT, "| %s | %s | %d | %,d | %,d | %s | %,d | %,d / %,d | %,d | %s | %s |%n",
						w.leaseCase().routeId(), w.leaseCase().limits(), w.counts().size(), w.min(), w.max(),
						String.join(", ", w.counts().values().stream()
							.map(n -> String.format(Locale.ROOT, "%,d", n))
							.toList()),
						w.beforeBoundary(), w.downstreamTotal(), w.allowed(), w.requests(), leaseCounts(w.leaseCase(), w.leases()),
						leaseShare(w.leaseCase(), w.leases().local(), w.allowed())));
				long least = (w.leaseCase().lease() != null) ? LeaseCase.EXACT_LEAST : w.leaseCase().limit();
				between(String.format(Locale.ROOT, "requests per full window, %s (%s)", w.leaseCase().routeId(),
						w.leaseCase().limits()), w.counts().isEmpty() ? -1 : w.min(), w.max(), least,
						w.leaseCase().limit());
				countsAgree(w.leaseCase(), w.countsAgree(), w.downstreamTotal(), w.allowed());
				invalidIfFailed(w.leaseCase(), w.failedDecisions());
			}
			md.append('\n');
		}
		if (!r.bounds().isEmpty()) {
			md.append("Token bucket under full load: admitted(t), requests that reached the downstream by t after the "
					+ "first, against burst + rate x t on every prefix (nginx's times are to the millisecond):\n\n"
					+ "| case | limits | admitted | seconds | burst + rate x seconds | largest excess | at s | wrk's 2xx / "
					+ "requests | leases | admitted from a lease |\n|---|---|---:|---:|---:|---:|---:|---|---|---:|\n");
			// what the same measurement gives without leases: the noise of nginx's times under this load
			double control = r.bounds().stream()
				.filter(b -> b.leaseCase().lease() == null)
				.mapToDouble(LeaseBenchmark.Bound::largestExcess)
				.max()
				.orElse(0);
			for (LeaseBenchmark.Bound b : r.bounds()) {
				md.append(String.format(Locale.ROOT, "| %s | %s | %,d | %.1f | %,.0f | %+.1f | %.3f | %,d / %,d | %s | "
						+ "%s |%n", b.leaseCase().routeId(), b.leaseCase().limits(), b.admitted(), b.seconds(),
						b.boundAtEnd(), b.largestExcess(), b.excessAtSeconds(), b.allowed(), b.requests(),
						leaseCounts(b.leaseCase(), b.leases()), leaseShare(b.leaseCase(), b.leases().local(),
								b.allowed())));
				double noise = Math.max(b.resolution(), (b.leaseCase().lease() != null) ? control : 0);
				String verdict = (b.largestExcess() <= 0) ? "met"
						: (b.largestExcess() <= noise) ? "met within the measurement's noise"
								: String.format(Locale.ROOT, "**missed** by %.1f requests", b.largestExcess());
				this.targets.add(new String[] {
						"token bucket, admitted(t) - (burst + rate x t), largest, " + b.leaseCase().routeId(),
						String.format(Locale.ROOT, "%+.1f", b.largestExcess()),
						String.format(Locale.ROOT, "<= 0 (noise: 2 ms of the rate %.1f%s)", b.resolution(),
								(b.leaseCase().lease() != null && control > 0)
										? String.format(Locale.ROOT, ", the control without lease %+.1f", control) : ""),
						verdict });
				countsAgree(b.leaseCase(), b.countsAgree(), b.admitted(), b.allowed());
				invalidIfFailed(b.leaseCase(), b.failedDecisions());
			}
			md.append('\n');
		}
		if (!this.leaseCluster.isEmpty()) {
			md.append("A cold client on the hot client's Redis Cluster master. ").append(this.leaseClusterSetup)
				.append(". vs alone: this p99 over the mean of the alone phases' p99s; Redis round trip: the cold "
						+ "route's `gateway.ratelimit.redis` histogram on instance a, the upper bound of the bucket holding "
						+ "its p99:\n\n| phase | cold client p50 ms | p99 ms | vs alone | Redis round trip p99, ms | "
						+ "requests | errors | hot client req/s (both instances) | scripts/s on their master |\n"
						+ "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
			double alone = this.leaseCluster.stream()
				.filter(p -> p.name().equals(ColdClientBenchmark.ALONE))
				.mapToDouble(ColdClientBenchmark.Phase::p99Millis)
				.average()
				.orElse(Double.NaN);
			for (ColdClientBenchmark.Phase p : this.leaseCluster) {
				md.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.2f | <= %.2f | %,d | %,d | %,.0f | %,.0f |%n",
						p.name(), p.p50Millis(), p.p99Millis(), p.p99Millis() / alone, p.redisP99Millis(), p.requests(),
						p.errors(), p.hotPerSecond(), p.masterScriptsPerSecond()));
				if (p.errors() > 0) {
					this.targets.add(new String[] { "cold client, " + p.name(), p.errors() + " errors or not 200", "0",
							"**invalid run**" });
				}
			}
			double besideLease = this.leaseCluster.stream()
				.filter(p -> p.name().equals(ColdClientBenchmark.BESIDE_LEASE))
				.mapToDouble(ColdClientBenchmark.Phase::p99Millis)
				.average()
				.orElse(Double.NaN);
			atMost("cold client's p99 beside the hot client on hot-lease / alone, means over rounds (Redis Cluster, "
					+ "same master)", besideLease / alone, 1.10, String.format(Locale.ROOT, "%.2f", besideLease / alone),
					"<= 1.10");
			md.append('\n');
		}
		return md.toString();
	}

	/** nginx's log must hold what wrk counted as 2xx, and at most the requests in flight at wrk's end more. */
	private void countsAgree(LeaseCase c, boolean agree, long logged, long allowed) {
		if (!agree) {
			this.targets.add(new String[] { "downstream's count, " + c.routeId(),
					String.format(Locale.ROOT, "%,d logged, %,d 2xx", logged, allowed),
					"2xx to 2xx + connections", "**invalid run**" });
		}
	}

	private void invalidIfFailed(LeaseCase c, long failedDecisions) {
		if (failedDecisions > 0) {
			this.targets.add(new String[] { "leases, " + c.routeId(),
					failedDecisions + " decisions failed open (gateway logs)", "0", "**invalid run**" });
		}
	}

	private static String leaseCounts(LeaseCase c, LeaseBenchmark.Leases l) {
		return (c.lease() == null) ? "" : String.format(Locale.ROOT, "%,.0f / %,.0f / %,.0f", l.taken(), l.returned(),
				l.refused());
	}

	private static String leaseShare(LeaseCase c, double local, long requests) {
		return (c.lease() == null) ? "" : String.format(Locale.ROOT, "%,.0f (%.1f%%)", local,
				100 * local / Math.max(1, requests));
	}

	/** A count that must lie within {@code [least, most]}: {@code min} and {@code max} are the measured extremes. */
	private void between(String what, long min, long max, long least, long most) {
		boolean met = min >= least && max <= most;
		String verdict = (min < 0) ? "**no full window**"
				: met ? "met" : (max > most) ? String.format(Locale.ROOT, "**missed**: %,d over", max - most)
						: String.format(Locale.ROOT, "**missed**: %,d under", least - min);
		this.targets.add(new String[] { what, String.format(Locale.ROOT, "%,d to %,d", min, max),
				(least == most) ? String.format(Locale.ROOT, "%,d", most)
						: String.format(Locale.ROOT, "%,d to %,d", least, most),
				verdict });
	}

	private static String withExtra(double value, double base, boolean isBase) {
		return isBase ? String.format(Locale.ROOT, "%.1f", value)
				: String.format(Locale.ROOT, "%.1f (%+.1f)", value, value - base);
	}

	private static double sum(Map<String, Double> values) {
		return values.values().stream().mapToDouble(Double::doubleValue).sum();
	}

	private String httpTables() {
		if (this.http.isEmpty()) {
			return "";
		}
		StringBuilder md = new StringBuilder("## 2. HTTP through gateway-app\n\n").append(this.httpSetup).append(".\n\n");
		Optional<HttpBenchmark.Result> none = result(HttpCase.NONE, false);
		Optional<HttpBenchmark.Result> builtIn = result(HttpCase.BUILT_IN, false);
		Optional<HttpBenchmark.Result> builtInFlood = result(HttpCase.BUILT_IN, true);
		md.append("10,000 clients, all allowed (ratios: this case's req/s over the other's in the same round):\n\n"
				+ "| limiter | req/s | p50 ms | p99 ms | vs no limiter | vs built-in | req/s per round |\n"
				+ "|---|---:|---:|---:|---:|---:|---|\n");
		for (HttpBenchmark.Result r : this.http) {
			if (!r.httpCase().flood()) {
				md.append(String.format(Locale.ROOT, "| %s | %,.0f | %.2f | %.2f | %s | %s | %s |%n", r.httpCase().label(),
						r.perSecond(), r.p50Millis(), r.p99Millis(), spread(rateRatios(r, none)),
						spread(rateRatios(r, builtIn)), rounds(r)));
			}
		}
		md.append("\nCPU per request by process, in microseconds (medians over rounds; the gateway's JVM and nginx from "
				+ "`/proc`, Redis from `INFO cpu`, wrk as the benchmark's reaped children); added: the gateway's CPU per "
				+ "request less no limiter's in the same round; Redis per script: Redis's CPU over the scripts it ran "
				+ "(its network work included), and the time `INFO commandstats` gives the scripts alone:\n\n"
				+ "| limiter | gateway | added | Redis | scripts per request | Redis per script | commandstats per script "
				+ "| scripts per read | downstream | wrk | total |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (HttpBenchmark.Result r : this.http) {
			boolean scripts = r.median(HttpBenchmark.Round::scriptsPerRequest) > 0.5;
			md.append(String.format(Locale.ROOT, "| %s%s | %.1f | %s | %.1f | %.2f | %s | %s | %s | %.1f | %.1f | %.1f |%n",
					r.httpCase().flood() ? "flood, " : "", r.httpCase().label(), r.median(x -> x.cpuMicros().get("gateway")),
					none.isPresent() && !r.httpCase().flood() ? spread(gatewayAdded(r, none.get()), "%+.1f") : "",
					r.median(x -> x.cpuMicros().get("Redis")), r.median(HttpBenchmark.Round::scriptsPerRequest),
					scripts ? String.format(Locale.ROOT, "%.1f", r.median(HttpBenchmark.Round::redisMicrosPerScript)) : "",
					scripts ? String.format(Locale.ROOT, "%.1f", r.median(HttpBenchmark.Round::scriptMicros)) : "",
					scripts ? String.format(Locale.ROOT, "%.1f", r.median(HttpBenchmark.Round::scriptsPerRead)) : "",
					r.median(x -> x.cpuMicros().get("downstream")), r.median(x -> x.cpuMicros().get("wrk")),
					r.median(x -> x.cpuMicros().values().stream().mapToDouble(Double::doubleValue).sum())));
		}
		this.http.stream().filter(r -> r.httpCase().control()).forEach(control -> {
			Optional<HttpBenchmark.Result> original = this.http.stream()
				.filter(r -> !r.httpCase().control() && !r.httpCase().flood()
						&& r.httpCase().algorithm() == control.httpCase().algorithm()
						&& r.httpCase().integration() == control.httpCase().integration())
				.findFirst();
			original.ifPresent(o -> md.append(String.format(Locale.ROOT, "%n**A/A control**: %s over %s, req/s %s; "
					+ "gateway CPU per request %s us. Two identical routes differ by this much in this run: a ratio "
					+ "inside it is no difference.%n", control.httpCase().label(), o.httpCase().label(),
					spread(rateRatios(control, original)), spread(gatewayAdded(control, o), "%+.1f"))));
		});
		md.append("\nOne client flooding far over its limit (ours ").append(GatewayRoutes.FLOOD_LIMIT).append(" per ")
			.append(GatewayRoutes.FLOOD_WINDOW).append(", built-in replenish-rate ").append(GatewayRoutes.BUILT_IN_FLOOD_RATE)
			.append(" burst ").append(GatewayRoutes.BUILT_IN_FLOOD_BURST).append("):\n\n")
			.append("| limiter | req/s | p50 ms | p99 ms | refused | vs built-in | req/s per round |\n")
			.append("|---|---:|---:|---:|---:|---:|---|\n");
		for (HttpBenchmark.Result r : this.http) {
			if (r.httpCase().flood()) {
				md.append(String.format(Locale.ROOT, "| %s | %,.0f | %.2f | %.2f | %.2f%% | %s | %s |%n",
						r.httpCase().label(), r.perSecond(), r.p50Millis(), r.p99Millis(), 100 * r.rejectedShare(),
						spread(rateRatios(r, builtInFlood)), rounds(r)));
			}
		}
		for (HttpBenchmark.Result r : this.http) {
			if (r.failedDecisions() > 0) {
				this.targets.add(new String[] { "HTTP, " + r.httpCase().routeId(),
						r.failedDecisions() + " decisions failed open (gateway.log)", "0", "**invalid run**" });
			}
		}
		for (HttpBenchmark.Result r : this.http) {
			if (r.httpCase().ours() && !r.httpCase().flood() && !r.httpCase().control()) {
				String label = r.httpCase().label();
				if (builtIn.isPresent()) {
					atLeast("HTTP req/s, " + label + " / built-in", SseBenchmark.median(rateRatios(r, builtIn)),
							VS_BUILT_IN_TARGET);
				}
				if (none.isPresent()) {
					atLeast("HTTP req/s, " + label + " / no limiter", SseBenchmark.median(rateRatios(r, none)),
							VS_NONE_TARGET);
					atMost("gateway CPU added per request, " + label + ", us",
							SseBenchmark.median(gatewayAdded(r, none.get())), GATEWAY_MICROS_TARGET);
				}
				atMost("Redis CPU per decision, " + label + ", us", r.median(HttpBenchmark.Round::redisMicrosPerScript),
						REDIS_MICROS_TARGET);
			}
		}
		for (HttpBenchmark.Result r : this.http) {
			if (r.httpCase().ours() && r.httpCase().flood() && builtInFlood.isPresent()) {
				atLeast("flood req/s, " + r.httpCase().label() + " / built-in",
						SseBenchmark.median(rateRatios(r, builtInFlood)), FLOOD_TARGET);
			}
		}
		return md.append('\n').toString();
	}

	/** Round by round, {@code r}'s req/s over {@code other}'s; empty if there is no other. */
	private static List<Double> rateRatios(HttpBenchmark.Result r, Optional<HttpBenchmark.Result> other) {
		return other.map(o -> r.perRound(o, (a, b) -> a.run().perSecond() / b.run().perSecond())).orElse(List.of());
	}

	private static List<Double> gatewayAdded(HttpBenchmark.Result r, HttpBenchmark.Result base) {
		return r.perRound(base, (a, b) -> a.cpuMicros().get("gateway") - b.cpuMicros().get("gateway"));
	}

	private static String spread(List<Double> values) {
		return spread(values, "%.2f");
	}

	/** The median and, for more than one value, the lowest and highest: {@code 0.83 (0.80-0.86)}. */
	private static String spread(List<Double> values, String format) {
		if (values.isEmpty()) {
			return "";
		}
		String median = String.format(Locale.ROOT, format, SseBenchmark.median(values));
		return (values.size() == 1) ? median
				: median + " (" + String.format(Locale.ROOT, format, SseBenchmark.quantile(values, 0))
						+ " to " + String.format(Locale.ROOT, format, SseBenchmark.quantile(values, 1)) + ")";
	}

	private String memoryTable() {
		if (this.memory.isEmpty()) {
			return "";
		}
		StringBuilder md = new StringBuilder("## 3. Redis memory per client\n\n");
		md.append("Clients using all of a limit of N per minute (one request every minute / N), replayed with explicit "
				+ "times for 90 s; growth of `used_memory` from C to 2C such clients, over C. Keys "
				+ "`wrl:{<12 digits>}:orders:<suffix>`. C is chosen so the key tables are as full as with 5 million "
				+ "clients, so the per-client figure includes each key's share of them (about 27 bytes).\n\n");
		md.append("| algorithm | limit/min = requests/min | C | bytes per client | MEMORY USAGE of one key | denied | "
				+ "5 million clients |\n|---|---:|---:|---:|---:|---:|---:|\n");
		for (MemoryBenchmark.Result r : this.memory) {
			String name = Algorithms.name(r.algorithm());
			md.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %,.0f | %,d | %.1f%% | %s |%n", name, r.perMinute(),
					r.clients(), r.bytesPerClient(), r.memoryUsageOfOneKey(), 100 * r.deniedShare(),
					size(r.extrapolatedBytes())));
			String id = r.algorithm().id();
			Long goal = (r.perMinute() == 100) ? MEMORY_TARGETS.get(id)
					: (id.equals("sliding-log") && r.perMinute() == 10_000) ? HEAVY_LOG_TARGET : null;
			if (goal != null) {
				atMost(String.format(Locale.ROOT, "bytes per client, %s at %,d/min", name, r.perMinute()),
						r.bytesPerClient(), goal);
			}
		}
		return md.append('\n').toString();
	}

	private Optional<HttpBenchmark.Result> result(String limiter, boolean flood) {
		return this.http.stream()
			.filter(r -> r.httpCase().limiter().equals(limiter) && r.httpCase().flood() == flood && !r.httpCase().control())
			.findFirst();
	}

	private static String rounds(HttpBenchmark.Result r) {
		return String.join(", ", r.roundRates().stream().map(rate -> String.format(Locale.ROOT, "%,.0f", rate)).toList());
	}

	private void atLeast(String what, double measured, double goal) {
		String verdict = (measured >= goal)
				? String.format(Locale.ROOT, "met, %.0f%% above", 100 * (measured / goal - 1))
				: String.format(Locale.ROOT, "**missed** by %.0f%%", 100 * (1 - measured / goal));
		this.targets.add(new String[] { what, String.format(Locale.ROOT, "%.2f", measured),
				String.format(Locale.ROOT, ">= %.2f", goal), verdict });
	}

	/** A target of microseconds: figures with one decimal. */
	private void atMost(String what, double measured, double goal) {
		atMost(what, measured, goal, String.format(Locale.ROOT, "%.1f", measured),
				String.format(Locale.ROOT, "<= %.0f", goal));
	}

	/** A target of bytes: whole figures. */
	private void atMost(String what, double measured, long goal) {
		atMost(what, measured, goal, String.format(Locale.ROOT, "%,.0f", measured),
				String.format(Locale.ROOT, "<= %,d", goal));
	}

	private void atMost(String what, double measured, double goal, String measuredText, String goalText) {
		String verdict = (measured <= goal)
				? String.format(Locale.ROOT, "met, %.0f%% below", 100 * (1 - measured / goal))
				: String.format(Locale.ROOT, "**missed** by %.0f%%", 100 * (measured / goal - 1));
		this.targets.add(new String[] { what, measuredText, goalText, verdict });
	}

	private static String size(double bytes) {
		if (bytes >= 1e12) {
			return String.format(Locale.ROOT, "%.1f TB", bytes / 1e12);
		}
		if (bytes >= 1e9) {
			return String.format(Locale.ROOT, "%.1f GB", bytes / 1e9);
		}
		return String.format(Locale.ROOT, "%.0f MB", bytes / 1e6);
	}

}
