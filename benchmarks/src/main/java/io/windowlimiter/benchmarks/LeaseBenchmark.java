package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Part 8: hot-client leases (issue 46). Two gateway-app jars at their defaults on one Redis, nginx behind them, one
 * wrk per instance at the same time, every request carrying a client key. Throughput cases ({@link LeaseCase#chosen()}):
 * 10,000 keys without leases against one key without and with a lease, limits never reached, after a JIT warm-up, in
 * rounds of a rotated order; per round, both instances' req/s, Redis scripts per request ({@code INFO commandstats})
 * and gateway CPU per request. Then exactness from the downstream's side: nginx writes the time of every request a
 * gateway let through, and the fixed window's counts per window aligned to the epoch, and the token bucket's
 * admissions on every prefix of the run, are checked against the limits.
 */
final class LeaseBenchmark {

	/** The lease metrics of one route, both instances summed: leases taken, returned, refused; requests admitted from one. */
	record Leases(double taken, double returned, double refused, double local) {

		static final Leases NONE = new Leases(0, 0, 0, 0);

		Leases plus(Leases other) {
			return new Leases(this.taken + other.taken, this.returned + other.returned, this.refused + other.refused,
					this.local + other.local);
		}

		Leases minus(Leases earlier) {
			return new Leases(this.taken - earlier.taken, this.returned - earlier.returned, this.refused - earlier.refused,
					this.local - earlier.local);
		}

	}

	/** One throughput case's measured run: both instances' wrk figures, CPU and scripts per request, its leases. */
	record Round(double perSecond, double p99Millis, long requests, double gatewayMicros, double redisMicros,
			double scriptsPerRequest, Leases leases) {
	}

	/** A throughput case's rounds, in the run's order, and the decisions that failed open (fast 200s) during them. */
	record Throughput(LeaseCase leaseCase, List<Round> rounds, long failedDecisions) {

		double median(ToDoubleFunction<Round> figure) {
			return SseBenchmark.median(this.rounds.stream().map(figure::applyAsDouble).toList());
		}

		/** Round by round, this case's req/s over {@code other}'s in the same round. */
		List<Double> rateRatios(Throughput other) {
			List<Double> ratios = new ArrayList<>();
			for (int i = 0; i < Math.min(this.rounds.size(), other.rounds.size()); i++) {
				ratios.add(this.rounds.get(i).perSecond() / other.rounds.get(i).perSecond());
			}
			return ratios;
		}

		Leases leases() {
			return this.rounds.stream().map(Round::leases).reduce(Leases.NONE, Leases::plus);
		}

		long requests() {
			return this.rounds.stream().mapToLong(Round::requests).sum();
		}

	}

	/**
	 * A fixed window under full load: requests the downstream saw in each full window (its start, epoch millis, to its
	 * count); the most it saw in the {@link LeaseBenchmark#BOUNDARY_MILLIS} before a counted window's start (requests decided there
	 * may reach nginx in the next window: none means no count is blurred so); all the downstream saw of the run and
	 * the 2xx wrk counted, which must agree ({@code agree}).
	 */
	record Windows(LeaseCase leaseCase, Map<Long, Long> counts, long beforeBoundary, long downstreamTotal, long allowed,
			long requests, Leases leases, long failedDecisions, boolean countsAgree) {

		long min() {
			return this.counts.values().stream().mapToLong(Long::longValue).min().orElse(0);
		}

		long max() {
			return this.counts.values().stream().mapToLong(Long::longValue).max().orElse(0);
		}

	}

	/**
	 * The token bucket under full load: the admissions the downstream saw over {@code seconds} from the first; the
	 * largest excess of admitted(t) over burst + rate x t on any prefix, and at what t (seconds).
	 */
	record Bound(LeaseCase leaseCase, long admitted, double seconds, double boundAtEnd, double largestExcess,
			double excessAtSeconds, long allowed, long requests, Leases leases, long failedDecisions,
			boolean countsAgree) {

		/**
		 * What the bucket admits in 2 ms, nginx's resolution at both ends of an interval: its times are to the
		 * millisecond, and taken when it logs, a little after the gateway decided (by a time that varies under load,
		 * which is why the report sets the lease case beside the same bucket without lease).
		 */
		double resolution() {
			return 2.0 * this.leaseCase.limit() / this.leaseCase.windowMillis();
		}

	}

	record Results(List<Throughput> throughput, List<Windows> windows, List<Bound> bounds) {
	}

	/** One load of both instances at once: each wrk's run, and when it started (epoch millis). */
	private record Load(List<Wrk.Run> runs, long startMillis, int seconds) {

		double perSecond() {
			return this.runs.stream().mapToDouble(Wrk.Run::perSecond).sum();
		}

		long requests() {
			return this.runs.stream().mapToLong(Wrk.Run::requests).sum();
		}

		long allowed() {
			return requests() - this.runs.stream().mapToLong(Wrk.Run::statusErrors).sum();
		}

		/** The slower instance's p99. */
		double p99Millis() {
			return this.runs.stream().mapToDouble(Wrk.Run::p99Millis).max().orElse(0);
		}

		/** When wrk's duration ended; it stops no sooner. */
		long endMillis() {
			return this.startMillis + this.seconds * 1000L;
		}

	}

	/** Before a window's start, where the time from a gateway to nginx could carry a request into the window. */
	static final long BOUNDARY_MILLIS = 100;

	/** nginx's access log line: "{@code <epoch seconds>.<millis> <path>}". */
	private static final Pattern STAMP = Pattern.compile("(\\d+)\\.(\\d{3}) (\\S+)");

	private final LocalRedis redis;

	private final Path workDir;

	private final Path gatewayJar;

	private final int warmUpSeconds = Settings.integer("lease.warmup-seconds", 120);

	private final int rounds = Settings.integer("lease.rounds", 3);

	private final int seconds = Settings.integer("lease.seconds", 20);

	private final int exactSeconds = Settings.integer("lease.exact-seconds", 65);

	/**
	 * How far into a window (epoch-aligned) the fixed-window cases' load starts. At 1 s, the window the load starts in
	 * has its quota spent before its end, as every later one has: nothing is admitted near the end of a window
	 * counted or of the one before it, where the time from a gateway's decision to nginx's log could move a request
	 * into the next window. Near the window's length (e.g. 9000 of 10 s) the first full window follows one whose
	 * quota was not spent, the case where a lease could outlive its window, and where that time blurs the count.
	 */
	private final int exactStartMillis = Settings.integer("lease.exact-start-millis", 1000);

	private final int boundSeconds = Settings.integer("lease.bound-seconds", 30);

	/** One wrk per instance, one thread each: two threads in all, as the HTTP part's one wrk has. */
	private final Wrk wrk;

	private final ExecutorService wrkRunner = Executors.newFixedThreadPool(2);

	private final HttpClient http = HttpClient.newHttpClient();

	private final List<GatewayProcess> gateways = new ArrayList<>();

	private String setup = "";

	LeaseBenchmark(LocalRedis redis, Path workDir, Path gatewayJar) throws IOException {
		this.redis = redis;
		this.workDir = workDir;
		this.gatewayJar = gatewayJar;
		this.wrk = Wrk.forClients(workDir, 1, Settings.integer("lease.connections", 16));
	}

	String setup() {
		return this.setup;
	}

	Results run() throws IOException, InterruptedException {
		List<LeaseCase> cases = LeaseCase.chosen();
		List<LeaseCase> throughput = cases.stream().filter(c -> c.kind() == LeaseCase.Kind.THROUGHPUT).toList();
		List<LeaseCase> stamped = cases.stream().filter(c -> c.kind() != LeaseCase.Kind.THROUGHPUT).toList();
		Path routes = this.workDir.resolve("gateway-leases.yml");
		Files.writeString(routes, LeaseCase.yaml(cases));
		Path accessLog = this.workDir.resolve("leases-downstream.log");
		Files.deleteIfExists(accessLog);
		String stampedPaths = stamped.isEmpty() ? "^/none-stamped/"
				: "^/(" + String.join("|", stamped.stream().map(LeaseCase::routeId).toList()) + ")/";
		int warmUpPerCase = throughput.isEmpty() ? 0
				: Math.max(1, (this.warmUpSeconds + throughput.size() - 1) / throughput.size());
		this.setup = String.format(Locale.ROOT, "Two gateway-app jars (%s) at their defaults on one Redis, proxying to "
				+ "nginx on loopback; one wrk per instance at the same time, 1 thread and %d keep-alive connections each, "
				+ "client keys by X-API-Key. Throughput cases: JIT warm-up %d s of load over them in turn (%d s each), "
				+ "then %d rounds of %d s, each in a rotated order; per round both instances' req/s summed, Redis scripts "
				+ "(INFO commandstats, eval and evalsha) per request wrk counted, both gateways' CPU per request, the "
				+ "slower instance's p99. Exactness: nginx logs the time ($msec) of every request the gateways let "
				+ "through; fixed windows under full load for %d s, counted per window aligned to the epoch (full "
				+ "windows only); the token bucket for %d s, checked on every prefix from its first admission",
				GatewayProcess.jvmOptions(), this.wrk.connections(), warmUpPerCase * throughput.size(), warmUpPerCase,
				this.rounds, this.seconds, this.exactSeconds, this.boundSeconds);
		try (Downstream downstream = Downstream.stamping(accessLog, stampedPaths)) {
			for (String name : List.of("a", "b")) {
				this.gateways.add(GatewayProcess.start(this.gatewayJar, this.redis.port(), downstream.uri(), routes,
						this.workDir.resolve("gateway-lease-" + name + ".log")));
			}
			for (LeaseCase c : cases) {
				check(c);
			}
			List<Throughput> throughputResults = throughput(throughput, warmUpPerCase, downstream);
			List<Windows> windows = new ArrayList<>();
			List<Bound> bounds = new ArrayList<>();
			for (LeaseCase c : stamped) {
				if (c.kind() == LeaseCase.Kind.WINDOWS) {
					windows.add(windows(c, accessLog));
				}
				else {
					bounds.add(bound(c, accessLog));
				}
			}
			return new Results(throughputResults, windows, bounds);
		}
		finally {
			for (GatewayProcess gateway : this.gateways) {
				gateway.close();
			}
			this.wrkRunner.shutdownNow();
			this.redis.flushAll();
		}
	}

	private List<Throughput> throughput(List<LeaseCase> cases, int warmUpPerCase, Downstream downstream)
			throws IOException, InterruptedException {
		for (LeaseCase c : cases) {
			load(c, warmUpPerCase);
		}
		failedDecisions();
		Map<LeaseCase, List<Round>> rounds = new LinkedHashMap<>();
		Map<LeaseCase, Long> failed = new LinkedHashMap<>();
		for (int round = 0; round < this.rounds; round++) {
			List<LeaseCase> order = new ArrayList<>(cases);
			Collections.rotate(order, -(round * cases.size() / this.rounds));
			for (LeaseCase c : order) {
				Round measured = measure(c, downstream);
				rounds.computeIfAbsent(c, k -> new ArrayList<>()).add(measured);
				failed.merge(c, failedDecisions(), Long::sum);
				System.out.printf(Locale.ROOT, "leases   round %d %-24s %,9.0f req/s  p99 %6.2f ms  %.3f scripts and "
						+ "%5.1f us gateway CPU per request; leases taken %,.0f, admitted from them %,.0f%n", round + 1,
						c.routeId(), measured.perSecond(), measured.p99Millis(), measured.scriptsPerRequest(),
						measured.gatewayMicros(), measured.leases().taken(), measured.leases().local());
			}
		}
		List<Throughput> results = new ArrayList<>();
		for (LeaseCase c : cases) {
			results.add(new Throughput(c, rounds.getOrDefault(c, List.of()), failed.getOrDefault(c, 0L)));
		}
		return results;
	}

	private Round measure(LeaseCase c, Downstream downstream) throws IOException, InterruptedException {
		// the leases of the load before have ended and their returns have run
		Thread.sleep(200);
		Leases leases = leases(c);
		LocalRedis.Scripts scripts = this.redis.scripts();
		List<ProcessCpu> before = cpu(downstream);
		Load load = load(c, this.seconds);
		// this load's leases end (at most 50 ms) and are returned: their scripts are this case's
		Thread.sleep(200);
		List<ProcessCpu> after = cpu(downstream);
		LocalRedis.Scripts ran = this.redis.scripts().minus(scripts);
		Leases leased = leases(c).minus(leases);
		for (Wrk.Run run : load.runs()) {
			if (run.socketErrors() > 0 || run.statusErrors() > 0) {
				throw new IllegalStateException(c.routeId() + ": " + run.socketErrors() + " socket errors and "
						+ run.statusErrors() + " answers not 2xx, though no client reaches the limit");
			}
		}
		double requests = Math.max(1, load.requests());
		double gatewayMicros = 0;
		for (int i = 0; i < before.size(); i++) {
			gatewayMicros += before.get(i).microsPerRequest(after.get(i), requests).get("gateway");
		}
		return new Round(load.perSecond(), load.p99Millis(), load.requests(), gatewayMicros,
				before.get(0).microsPerRequest(after.get(0), requests).get("Redis"), ran.calls() / requests, leased);
	}

	private Windows windows(LeaseCase c, Path accessLog) throws IOException, InterruptedException {
		long window = c.windowMillis();
		Thread.sleep(Math.floorMod(this.exactStartMillis - System.currentTimeMillis(), window));
		Leases leases = leases(c);
		Load load = load(c, this.exactSeconds);
		// nginx writes each line as it answers; the last answers are a few milliseconds behind wrk's end
		Thread.sleep(600);
		Leases leased = leases(c).minus(leases);
		List<Long> stamps = stamps(accessLog, c, load);
		Map<Long, Long> counts = new LinkedHashMap<>();
		long beforeBoundary = 0;
		for (long start = ceilDiv(load.startMillis(), window) * window; start + window <= load.endMillis(); start += window) {
			long from = start;
			counts.put(start, stamps.stream().filter(t -> t >= from && t < from + window).count());
			beforeBoundary = Math.max(beforeBoundary,
					stamps.stream().filter(t -> t >= from - BOUNDARY_MILLIS && t < from).count());
		}
		Windows result = new Windows(c, counts, beforeBoundary, stamps.size(), load.allowed(), load.requests(), leased,
				failedDecisions(), agree(stamps.size(), load.allowed()));
		System.out.printf(Locale.ROOT, "leases   %-24s full windows of %s: %s (min %,d, max %,d; at most %d in the "
				+ "%d ms before one); downstream saw %,d, wrk counted %,d 2xx of %,d%n", c.routeId(), c.window(),
				counts.values(), result.min(), result.max(), beforeBoundary, BOUNDARY_MILLIS, stamps.size(),
				load.allowed(), load.requests());
		return result;
	}

	private Bound bound(LeaseCase c, Path accessLog) throws IOException, InterruptedException {
		Leases leases = leases(c);
		Load load = load(c, this.boundSeconds);
		Thread.sleep(600);
		Leases leased = leases(c).minus(leases);
		List<Long> stamps = stamps(accessLog, c, load);
		double perMilli = c.limit() / (double) c.windowMillis();
		long first = stamps.isEmpty() ? load.startMillis() : stamps.get(0);
		double largestExcess = Double.NEGATIVE_INFINITY;
		double excessAt = 0;
		for (int i = 0; i < stamps.size(); i++) {
			double excess = (i + 1) - (c.burst() + perMilli * (stamps.get(i) - first));
			if (excess > largestExcess) {
				largestExcess = excess;
				excessAt = (stamps.get(i) - first) / 1000.0;
			}
		}
		// to the last admission: wrk runs a little longer than its duration after this JVM starts it
		double seconds = stamps.isEmpty() ? 0 : (stamps.get(stamps.size() - 1) - first) / 1000.0;
		Bound result = new Bound(c, stamps.size(), seconds, c.burst() + perMilli * 1000 * seconds, largestExcess,
				excessAt, load.allowed(), load.requests(), leased, failedDecisions(),
				agree(stamps.size(), load.allowed()));
		System.out.printf(Locale.ROOT, "leases   %-24s admitted %,d in %.1f s, bound %,.0f; largest excess over burst + "
				+ "rate x t: %+.1f at %.3f s%n", c.routeId(), result.admitted(), seconds, result.boundAtEnd(),
				largestExcess, excessAt);
		return result;
	}

	/**
	 * Whether nginx's count of a run agrees with wrk's 2xx: it may be higher by the requests in flight when wrk stopped
	 * (forwarded and logged, their answers not read), at most one per connection.
	 */
	private boolean agree(long logged, long allowed) {
		return logged >= allowed && logged <= allowed + (long) this.gateways.size() * this.wrk.connections();
	}

	/** The times (epoch millis, ascending) of {@code c}'s requests the downstream logged during {@code load}. */
	private static List<Long> stamps(Path accessLog, LeaseCase c, Load load) throws IOException {
		List<Long> stamps = new ArrayList<>();
		String prefix = "/" + c.routeId() + "/";
		for (String line : Files.readAllLines(accessLog)) {
			Matcher matcher = STAMP.matcher(line);
			if (matcher.matches() && matcher.group(3).startsWith(prefix)) {
				long millis = Long.parseLong(matcher.group(1)) * 1000 + Long.parseLong(matcher.group(2));
				if (millis >= load.startMillis()) {
					stamps.add(millis);
				}
			}
		}
		Collections.sort(stamps);
		return stamps;
	}

	/** Loads both instances at once, one wrk each, for {@code duration} seconds. */
	private Load load(LeaseCase c, int duration) throws InterruptedException {
		List<Callable<Wrk.Run>> runs = new ArrayList<>();
		for (GatewayProcess gateway : this.gateways) {
			runs.add(() -> this.wrk.run(gateway.url(c.path()), duration, c.clients()));
		}
		long start = System.currentTimeMillis();
		List<Wrk.Run> results = new ArrayList<>();
		for (Future<Wrk.Run> run : this.wrkRunner.invokeAll(runs)) {
			try {
				results.add(run.get());
			}
			catch (ExecutionException ex) {
				throw new IllegalStateException("wrk on " + c.routeId() + " failed", ex.getCause());
			}
		}
		return new Load(results, start, duration);
	}

	private List<ProcessCpu> cpu(Downstream downstream) throws IOException {
		List<ProcessCpu> readings = new ArrayList<>();
		for (GatewayProcess gateway : this.gateways) {
			readings.add(ProcessCpu.read(gateway, this.redis, downstream));
		}
		return readings;
	}

	/** Both instances' decisions that failed open since the last call (the limiter logs them every 500 ms). */
	private long failedDecisions() throws IOException, InterruptedException {
		Thread.sleep(600);
		long failed = 0;
		for (GatewayProcess gateway : this.gateways) {
			failed += gateway.failedDecisionsSinceLastCall();
		}
		return failed;
	}

	/**
	 * The route's lease metrics, both instances summed, from {@code /actuator/prometheus} (exposed at the jar's
	 * defaults): {@code gateway.ratelimit.leases} by {@code outcome}, {@code gateway.ratelimit.leases.local}. Zero
	 * where there are none (a route without {@code lease}, or code without leases).
	 */
	private Leases leases(LeaseCase c) throws IOException, InterruptedException {
		Leases sum = Leases.NONE;
		String route = "route=\"" + c.routeId() + "\"";
		for (GatewayProcess gateway : this.gateways) {
			HttpResponse<String> response = this.http.send(
					HttpRequest.newBuilder(URI.create(gateway.url("/actuator/prometheus"))).build(),
					HttpResponse.BodyHandlers.ofString());
			for (String line : response.body().split("\n")) {
				if (!line.startsWith("gateway_ratelimit_leases") || !line.contains(route)) {
					continue;
				}
				double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
				String name = line.substring(0, line.indexOf('{'));
				if (name.startsWith("gateway_ratelimit_leases_local")) {
					sum = sum.plus(new Leases(0, 0, 0, value));
				}
				else if (line.contains("outcome=\"taken\"")) {
					sum = sum.plus(new Leases(value, 0, 0, 0));
				}
				else if (line.contains("outcome=\"returned\"")) {
					sum = sum.plus(new Leases(0, value, 0, 0));
				}
				else if (line.contains("outcome=\"refused\"")) {
					sum = sum.plus(new Leases(0, 0, value, 0));
				}
			}
		}
		return sum;
	}

	/** One request per route on each instance before measuring: the limiter answers, the downstream is reached. */
	private void check(LeaseCase c) throws IOException, InterruptedException {
		for (GatewayProcess gateway : this.gateways) {
			HttpResponse<String> response = this.http.send(
					HttpRequest.newBuilder(URI.create(gateway.url(c.path()))).header("X-API-Key", "check").build(),
					HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200 || !response.body().equals("ok\n")
					|| response.headers().firstValue("X-RateLimit-Remaining").isEmpty()) {
				throw new IllegalStateException("Route " + c.routeId() + " answered " + response.statusCode() + " "
						+ response.headers().map() + ": not what its limiter gives");
			}
		}
	}

	private static long ceilDiv(long x, long y) {
		return -Math.floorDiv(-x, y);
	}

}
