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

/**
 * Part 2: HTTP through gateway-app, one case per route ({@link HttpCase#measured()}): no limiter, each algorithm, the
 * fixed window again on a second identical route (the A/A control), the gateway's built-in {@code RedisRateLimiter},
 * 10,000 clients all allowed; then one client flooding far over its limit. The method of issue 47: the JIT warmed by
 * two minutes of load over all cases first, then rounds of 30 s per case, each round in a rotated order so no case
 * always runs first or after the same neighbour; per round and case, each process's CPU per request
 * ({@link ProcessCpu}) and the scripts Redis ran ({@code INFO commandstats}). Ratios are taken round by round (a case
 * against no limiter in the same round) and reported as their median and range, beside the A/A control's, which
 * says how far two identical routes differ in this run. Redis is flushed before every case's round and loaded a few
 * seconds before measuring, so every case starts from the same state. Each case is checked first: a limited route
 * must answer with its limiter's headers (ours fails open without them), so a broken limiter cannot pass for a
 * fast one.
 */
final class HttpBenchmark {

	/** One case's run in one round: wrk's figures, each process's CPU per request, the scripts Redis ran. */
	record Round(Wrk.Run run, Map<String, Double> cpuMicros, double scriptsPerRequest, double scriptMicros,
			double scriptsPerRead) {

		/** Redis's process CPU per script it ran: what one decision costs Redis, its network work included. */
		double redisMicrosPerScript() {
			return this.cpuMicros.get("Redis") / this.scriptsPerRequest;
		}

	}

	/** A case's rounds, in the order of the run's rounds, and the decisions that failed open during them. */
	record Result(HttpCase httpCase, List<Round> rounds, long failedDecisions) {

		double perSecond() {
			return median(r -> r.run().perSecond());
		}

		double p50Millis() {
			return median(r -> r.run().p50Millis());
		}

		double p99Millis() {
			return median(r -> r.run().p99Millis());
		}

		List<Double> roundRates() {
			return this.rounds.stream().map(r -> r.run().perSecond()).toList();
		}

		double rejectedShare() {
			return this.rounds.stream().mapToLong(r -> r.run().statusErrors()).sum()
					/ (double) this.rounds.stream().mapToLong(r -> r.run().requests()).sum();
		}

		/** The median over rounds of one figure of each round. */
		double median(java.util.function.ToDoubleFunction<Round> figure) {
			return SseBenchmark.median(this.rounds.stream().map(figure::applyAsDouble).toList());
		}

		/** Round by round, this case's figure against {@code other}'s in the same round. */
		List<Double> perRound(Result other, java.util.function.ToDoubleBiFunction<Round, Round> figure) {
			List<Double> values = new ArrayList<>();
			for (int i = 0; i < Math.min(this.rounds.size(), other.rounds.size()); i++) {
				values.add(figure.applyAsDouble(this.rounds.get(i), other.rounds.get(i)));
			}
			return values;
		}

	}

	private final LocalRedis redis;

	private final Path workDir;

	private final Path gatewayJar;

	private final int keys = Settings.integer("keys", 10_000);

	private final int seconds = Settings.integer("http.seconds", 30);

	/** Load over all cases, in turn, before any round: C2 compiles a route's paths for about a minute here. */
	private final int warmUpSeconds = Settings.integer("http.warmup-seconds", 120);

	/** Load before each measured run, after Redis is flushed: the clients' keys exist again when measuring starts. */
	private final int preloadSeconds = Settings.integer("http.preload-seconds", 3);

	private final int rounds = Settings.integer("http.rounds", 4);

	private final Wrk wrk;

	private String setup = "";

	HttpBenchmark(LocalRedis redis, Path workDir, Path gatewayJar) throws IOException {
		this.redis = redis;
		this.workDir = workDir;
		this.gatewayJar = gatewayJar;
		this.wrk = Wrk.forClients(workDir, Settings.integer("http.connections", 32));
	}

	/** How the load was made, for the report. */
	String setup() {
		return this.setup;
	}

	List<Result> run() throws IOException, InterruptedException {
		List<HttpCase> cases = HttpCase.measured();
		Path routes = this.workDir.resolve("gateway-bench.yml");
		Files.writeString(routes, GatewayRoutes.yaml(cases));
		int warmUpPerCase = Math.max(1, (this.warmUpSeconds + cases.size() - 1) / cases.size());
		this.setup = String.format(Locale.ROOT, "wrk %d threads, %d keep-alive connections, %,d clients by X-API-Key "
				+ "(limits of %,d per %s; built-in: replenish-rate and burst-capacity %s); gateway-app's jar (%s) "
				+ "at its defaults proxying to nginx on loopback. JIT warm-up: %d s of load over all cases in turn "
				+ "(%d s each); then %d rounds, each case in a rotated order, per case Redis flushed, %d s of load "
				+ "unmeasured, %d s measured with each process's CPU and Redis's INFO commandstats. Figures are "
				+ "medians over rounds; ratios are taken round by round and given as median (lowest-highest)",
				this.wrk.threads(), this.wrk.connections(), this.keys, Settings.allowedLimit(),
				GatewayRoutes.ALLOWED_WINDOW, GatewayRoutes.BUILT_IN_HIGH_RATE, GatewayProcess.jvmOptions(),
				warmUpPerCase * cases.size(), warmUpPerCase, this.rounds, this.preloadSeconds, this.seconds);
		Map<HttpCase, List<Round>> results = new LinkedHashMap<>();
		cases.forEach(c -> results.put(c, new ArrayList<>()));
		Map<HttpCase, Long> failed = new LinkedHashMap<>();
		cases.forEach(c -> failed.put(c, 0L));
		try (Downstream downstream = new Downstream();
				GatewayProcess gateway = GatewayProcess.start(this.gatewayJar, this.redis.port(), downstream.uri(), routes,
						this.workDir.resolve("gateway.log"))) {
			for (HttpCase c : cases) {
				check(gateway, c);
			}
			for (HttpCase c : cases) {
				this.redis.flushAll();
				load(gateway, c, warmUpPerCase);
			}
			for (int round = 0; round < this.rounds; round++) {
				List<HttpCase> order = new ArrayList<>(cases);
				Collections.rotate(order, -(round * cases.size() / this.rounds));
				for (HttpCase c : order) {
					this.redis.flushAll();
					load(gateway, c, this.preloadSeconds);
					gateway.failedDecisionsSinceLastCall();
					Round measured = measure(gateway, downstream, c);
					results.get(c).add(measured);
					// the limiter reports failures at most every 500 ms
					Thread.sleep(600);
					failed.merge(c, gateway.failedDecisionsSinceLastCall(), Long::sum);
					System.out.printf(Locale.ROOT, "http     round %d %-30s %,9.0f req/s  p99 %6.2f ms  CPU per request: "
							+ "gateway %5.1f us, Redis %5.1f us (%.2f scripts, %.1f us each in commandstats, %.1f a read)%n",
							round + 1,
							c.routeId(), measured.run().perSecond(), measured.run().p99Millis(),
							measured.cpuMicros().get("gateway"), measured.cpuMicros().get("Redis"),
							measured.scriptsPerRequest(), measured.scriptMicros(), measured.scriptsPerRead());
				}
			}
		}
		this.redis.flushAll();
		List<Result> list = new ArrayList<>();
		results.forEach((c, rounds) -> list.add(new Result(c, rounds, failed.get(c))));
		return list;
	}

	private Round measure(GatewayProcess gateway, Downstream downstream, HttpCase c)
			throws IOException, InterruptedException {
		LocalRedis.Scripts scripts = this.redis.scripts();
		long reads = this.redis.readsProcessed();
		ProcessCpu before = ProcessCpu.read(gateway, this.redis, downstream);
		Wrk.Run run = load(gateway, c, this.seconds);
		ProcessCpu after = ProcessCpu.read(gateway, this.redis, downstream);
		LocalRedis.Scripts ran = this.redis.scripts().minus(scripts);
		long read = this.redis.readsProcessed() - reads;
		validate(c, run);
		double requests = Math.max(1, run.requests());
		return new Round(run, before.microsPerRequest(after, requests), ran.calls() / requests,
				(ran.calls() == 0) ? 0 : ran.micros() / (double) ran.calls(), ran.calls() / (double) Math.max(1, read));
	}

	private Wrk.Run load(GatewayProcess gateway, HttpCase c, int duration) throws IOException, InterruptedException {
		return this.wrk.run(gateway.url(c.path()), duration, c.flood() ? 1 : this.keys);
	}

	/** Allowed cases must all pass, a flood must be almost all refused, and no socket may fail. */
	static void validate(HttpCase c, Wrk.Run run) {
		if (run.socketErrors() > 0) {
			throw new IllegalStateException(c.routeId() + ": " + run.socketErrors() + " socket errors or timeouts");
		}
		if (!c.flood() && run.statusErrors() > 0) {
			throw new IllegalStateException(c.routeId() + ": " + run.statusErrors() + " responses were not 2xx");
		}
		if (c.flood() && run.statusErrors() < 0.99 * run.requests()) {
			throw new IllegalStateException(c.routeId() + ": only " + run.statusErrors() + " of " + run.requests()
					+ " flood requests were refused");
		}
	}

	/** One request per route before measuring: the right limiter answers, the downstream is reached. */
	static void check(GatewayProcess gateway, HttpCase c) throws IOException, InterruptedException {
		HttpClient client = HttpClient.newHttpClient();
		HttpResponse<String> response = client.send(
				HttpRequest.newBuilder(URI.create(gateway.url(c.path()))).header("X-API-Key", "check").build(),
				HttpResponse.BodyHandlers.ofString());
		String expectedHeader = switch (c.limiter()) {
			case HttpCase.NONE -> null;
			case HttpCase.BUILT_IN -> "X-RateLimit-Replenish-Rate";
			default -> "X-RateLimit-Remaining";
		};
		boolean limited = response.headers().firstValue("X-RateLimit-Remaining").isPresent();
		boolean ok = response.statusCode() == 200 && response.body().equals("ok\n")
				&& ((expectedHeader == null) ? !limited : response.headers().firstValue(expectedHeader).isPresent());
		if (!ok) {
			throw new IllegalStateException("Route " + c.routeId() + " answered " + response.statusCode() + " "
					+ response.headers().map() + ": not what its limiter (" + c.limiter() + ") gives");
		}
	}

}
