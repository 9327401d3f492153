package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Part 2: HTTP through gateway-app, one case per route ({@link HttpCase}): no limiter, each
 * algorithm (the sliding log also at its largest limit), the gateway's built-in {@code RedisRateLimiter}, 10,000 clients all allowed; then one
 * client flooding far over its limit, ours against the built-in. wrk loads each case for the same
 * time with the same threads and connections, one case after another in one run: a warm-up pass over
 * all cases, then rounds, every other round in reverse order so drift over the run does not favour
 * one case. Redis is flushed before every case's warm-up. Each case is checked first: a limited route must
 * answer with its limiter's headers (ours fails open without them), so a broken limiter cannot pass
 * for a fast one.
 */
final class HttpBenchmark {

	/**
	 * One row of the results: the fastest round, with its latencies. Other work on the machine only
	 * ever slows a round down, so the fastest is the one nearest to what the case costs undisturbed.
	 */
	record Result(HttpCase httpCase, double perSecond, double p50Millis, double p99Millis, List<Double> roundRates,
			double rejectedShare, long failedDecisions) {
	}

	private final LocalRedis redis;

	private final Path workDir;

	private final Path gatewayJar;

	private final int keys = Settings.integer("keys", 10_000);

	private final int seconds = Settings.integer("http.seconds", 5);

	private final int warmUpSeconds = Settings.integer("http.warmup-seconds", 2);

	private final int rounds = Settings.integer("http.rounds", 3);

	private final Wrk wrk;

	private String setup = "";

	HttpBenchmark(LocalRedis redis, Path workDir, Path gatewayJar) throws IOException {
		this.redis = redis;
		this.workDir = workDir;
		this.gatewayJar = gatewayJar;
		this.wrk = Wrk.forClients(workDir);
	}

	/** How the load was made, for the report. */
	String setup() {
		return this.setup;
	}

	List<Result> run() throws IOException, InterruptedException {
		List<HttpCase> cases = HttpCase.all();
		Path routes = this.workDir.resolve("gateway-bench.yml");
		Files.writeString(routes, GatewayRoutes.yaml(cases));
		this.setup = String.format("wrk %d threads, %d connections, %d s per case after %d s warm-up, %d rounds "
				+ "(every other one in reverse order), one warm-up pass over all cases first, figures from each case's "
				+ "fastest round (other work on the machine only slows rounds down); gateway-app's jar (%s) "
				+ "proxying to nginx on loopback, Redis flushed before each case; %,d clients by X-API-Key "
				+ "with limits of %,d per %s, the sliding log also at %,d, its maximum (built-in: replenish-rate and "
				+ "burst-capacity %s)",
				this.wrk.threads(), this.wrk.connections(), this.seconds, this.warmUpSeconds, this.rounds,
				GatewayProcess.jvmOptions(), this.keys, Settings.allowedLimit(),
				GatewayRoutes.ALLOWED_WINDOW, Algorithms.MAX_LOG_LIMIT, GatewayRoutes.BUILT_IN_HIGH_RATE);
		Map<HttpCase, List<Wrk.Run>> runs = new LinkedHashMap<>();
		cases.forEach(c -> runs.put(c, new ArrayList<>()));
		Map<HttpCase, Long> failed = new LinkedHashMap<>();
		cases.forEach(c -> failed.put(c, 0L));
		try (Downstream downstream = new Downstream();
				GatewayProcess gateway = GatewayProcess.start(this.gatewayJar, this.redis.port(), downstream.uri(), routes,
						this.workDir.resolve("gateway.log"))) {
			for (HttpCase c : cases) {
				check(gateway, c);
			}
			// JIT: every route's code path compiled before anything is measured
			for (HttpCase c : cases) {
				this.redis.flushAll();
				load(gateway, c, this.warmUpSeconds);
			}
			for (int round = 0; round < this.rounds; round++) {
				List<HttpCase> order = new ArrayList<>(cases);
				if (round % 2 == 1) {
					java.util.Collections.reverse(order);
				}
				for (HttpCase c : order) {
					// Same state for every case: an empty Redis, then the warm-up creates most clients' keys
					this.redis.flushAll();
					load(gateway, c, this.warmUpSeconds);
					gateway.failedDecisionsSinceLastCall();
					Wrk.Run run = load(gateway, c, this.seconds);
					validate(c, run);
					runs.get(c).add(run);
					// the limiter reports failures at most every 500 ms
					Thread.sleep(600);
					failed.merge(c, gateway.failedDecisionsSinceLastCall(), Long::sum);
					System.out.printf("http     round %d %-30s %,9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  not 2xx %,d%n",
							round + 1, c.routeId(), run.perSecond(), run.p50Millis(), run.p99Millis(), run.statusErrors());
				}
			}
		}
		this.redis.flushAll();
		List<Result> results = new ArrayList<>();
		runs.forEach((c, list) -> {
			Wrk.Run fastest = list.stream().max(Comparator.comparingDouble(Wrk.Run::perSecond)).orElseThrow();
			results.add(new Result(c, fastest.perSecond(), fastest.p50Millis(), fastest.p99Millis(),
				list.stream().map(Wrk.Run::perSecond).toList(),
				list.stream().mapToLong(Wrk.Run::statusErrors).sum()
						/ (double) list.stream().mapToLong(Wrk.Run::requests).sum(),
				failed.get(c)));
		});
		return results;
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
