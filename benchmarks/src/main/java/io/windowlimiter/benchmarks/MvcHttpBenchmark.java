package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * HTTP through gateway-app-mvc (Spring Cloud Gateway Server MVC on Tomcat), three routes to one Reactor
 * Netty downstream, in one run: {@code none} (no limiter), {@code ours} ({@code WindowRateLimit}, sliding window
 * counter: the default algorithm), {@code ours-token-bucket} (the same filter with {@code token-bucket}, the
 * algorithm Bucket4j runs) and {@code bucket4j} (the gateway's own {@code rateLimit} filter, a token bucket set
 * up in the Java DSL over the same Redis with Bucket4j's Lettuce proxy manager). Every request is allowed: 10,000 clients by
 * X-API-Key, limits far above what they send, so each case measures the decision, not refusals. wrk loads
 * each case for the same time after a warm-up, in rounds, every other round in reverse order; each case's
 * fastest round is reported (other work on the machine only slows rounds down). Each route is checked first:
 * a limited route must answer with its limiter's header. Run with {@code benchmarks/run-mvc.sh}; the report
 * goes to {@code benchmarks/target/reports/<date>-mvc.md} ({@link ReportFile}), and the current page,
 * {@code benchmarks/results/mvc.md}, is updated by hand from it. {@code BENCH_MVC_VIRTUAL_THREADS=true}: the gateway
 * on virtual threads (needs the JVM running this on Java 21+).
 *
 * <p>gateway-app's WebFlux jar runs beside it in the same run, with {@code webflux-none} (no limiter) and
 * {@code webflux-ours} (the same {@code WindowRateLimit} limits), so the report sets ours' ratio to no limiter
 * on Server MVC against the same ratio on WebFlux, measured side by side.
 */
public final class MvcHttpBenchmark {

	private static final List<String> CASES = List.of("none", "ours", "ours-token-bucket", "bucket4j", "webflux-none",
			"webflux-ours");

	private static final String WEBFLUX = "webflux-";

	private MvcHttpBenchmark() {
	}

	record Result(String route, double perSecond, double p50Millis, double p99Millis, List<Double> roundRates) {
	}

	public static void main(String[] args) throws Exception {
		Path root = Path.of(Settings.string("root", ".")).toAbsolutePath().normalize();
		Path workDir = root.resolve("benchmarks/target/bench-work");
		Files.createDirectories(workDir);
		int keys = Settings.integer("keys", 10_000);
		int seconds = Settings.integer("http.seconds", 5);
		int warmUp = Settings.integer("http.warmup-seconds", 2);
		int rounds = Settings.integer("http.rounds", 3);
		boolean virtual = Boolean.parseBoolean(Settings.string("mvc.virtual-threads", "false"));
		Wrk wrk = Wrk.forClients(workDir);
		Map<String, List<Wrk.Run>> runs = new LinkedHashMap<>();
		CASES.forEach(c -> runs.put(c, new ArrayList<>()));
		Machine machine;
		try (LocalRedis redis = LocalRedis.startOrConnect(workDir); Downstream downstream = new Downstream()) {
			machine = Machine.describe(root, redis.version());
			Path routes = workDir.resolve("gateway-mvc-bench.yml");
			Files.writeString(routes, routes(downstream.uri(), virtual));
			Path webfluxRoutes = workDir.resolve("gateway-webflux-bench.yml");
			Files.writeString(webfluxRoutes, webfluxRoutes());
			try (GatewayProcess mvc = GatewayProcess.start(gatewayJar(root), redis.port(), downstream.uri(), routes,
					workDir.resolve("gateway-mvc.log"));
					GatewayProcess webflux = GatewayProcess.start(RunBenchmarks.gatewayJar(root), redis.port(),
							downstream.uri(), webfluxRoutes, workDir.resolve("gateway-webflux.log"), "/" + WEBFLUX + "none/ready")) {
				java.util.function.Function<String, GatewayProcess> serving = c -> c.startsWith(WEBFLUX) ? webflux : mvc;
				for (String c : CASES) {
					check(serving.apply(c), c);
				}
				for (String c : CASES) {
					redis.flushAll();
					wrk.run(serving.apply(c).url("/" + c + "/x"), warmUp, keys);
				}
				for (int round = 0; round < rounds; round++) {
					List<String> order = new ArrayList<>(CASES);
					if (round % 2 == 1) {
						Collections.reverse(order);
					}
					for (String c : order) {
						GatewayProcess gateway = serving.apply(c);
						redis.flushAll();
						wrk.run(gateway.url("/" + c + "/x"), warmUp, keys);
						Wrk.Run run = wrk.run(gateway.url("/" + c + "/x"), seconds, keys);
						if (run.socketErrors() > 0 || run.statusErrors() > 0) {
							throw new IllegalStateException(c + ": " + run.socketErrors() + " socket errors, "
									+ run.statusErrors() + " answers not 2xx");
						}
						runs.get(c).add(run);
						System.out.printf("mvc http round %d %-10s %,9.0f req/s  p50 %6.2f ms  p99 %6.2f ms%n", round + 1, c,
								run.perSecond(), run.p50Millis(), run.p99Millis());
					}
				}
			}
		}
		List<Result> results = new ArrayList<>();
		runs.forEach((c, list) -> {
			Wrk.Run fastest = list.stream().max(Comparator.comparingDouble(Wrk.Run::perSecond)).orElseThrow();
			results.add(new Result(c, fastest.perSecond(), fastest.p50Millis(), fastest.p99Millis(),
					list.stream().map(Wrk.Run::perSecond).toList()));
		});
		String setup = String.format("wrk %d threads, %d connections, %d s per case after %d s warm-up, %d rounds "
				+ "(every other one in reverse order), figures from each case's fastest round; gateway-app-mvc's jar (%s, "
				+ "%s threads) and, for the webflux- cases, gateway-app's jar beside it (same options), proxying to "
				+ "nginx on loopback, Redis flushed before each case; %,d clients by X-API-Key, all allowed (ours: "
				+ "sliding window counter 1,000,000/min; ours-token-bucket: token bucket 1,000,000/min; bucket4j: "
				+ "capacity 1,000,000/min)",
				wrk.threads(), wrk.connections(), seconds, warmUp, rounds, GatewayProcess.jvmOptions(),
				virtual ? "virtual" : "platform", keys);
		String markdown = markdown(machine, setup, results);
		ReportFile.write(root, machine.fileStamp() + "-mvc.md", markdown, List.of("benchmarks/results/mvc.md"));
		System.exit(0);
	}

	static String routes(String downstream, boolean virtual) {
		return "spring.threads.virtual.enabled: " + virtual + "\n"
				+ "gateway-app-mvc.bucket4j-route.uri: " + downstream + "\n"
				+ "spring.cloud.gateway.server.webmvc.routes:\n"
				+ "  - id: none\n    uri: " + downstream + "\n    predicates: [ \"Path=/none/**\" ]\n"
				+ limitedRoute("ours", downstream, "headerKeyResolver", "sliding-window-counter")
				+ limitedRoute("ours-token-bucket", downstream, "headerKeyResolver", "token-bucket");
	}

	/** gateway-app's routes: no limiter, and WindowRateLimit with ours' limits on Server MVC. */
	static String webfluxRoutes() {
		return "logging.level.root: WARN\n"
				+ "spring.cloud.gateway.server.webflux.routes:\n"
				+ "  - id: webflux-none\n    uri: ${bench.downstream}\n    predicates: [ \"Path=/webflux-none/**\" ]\n"
				+ limitedRoute("webflux-ours", "${bench.downstream}", "\"#{@headerKeyResolver}\"", "sliding-window-counter");
	}

	/** A route under /{@code id}/ with WindowRateLimit: 1,000,000 a minute per X-API-Key, far above the load. */
	private static String limitedRoute(String id, String uri, String keyResolver, String algorithm) {
		return "  - id: " + id + "\n    uri: " + uri + "\n    predicates: [ \"Path=/" + id + "/**\" ]\n"
				+ "    filters:\n      - name: WindowRateLimit\n        args:\n"
				+ "          key-resolver: " + keyResolver + "\n          algorithm: " + algorithm + "\n"
				+ "          limit: 1000000\n          window: 1m\n";
	}

	/** One request per route before measuring: the right limiter answers (its header), the downstream is reached. */
	static void check(GatewayProcess gateway, String c) throws IOException, InterruptedException {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create(gateway.url("/" + c + "/x"))).header("X-API-Key", "check").build(),
					HttpResponse.BodyHandlers.ofString());
		boolean limited = response.headers().firstValue("X-RateLimit-Remaining").isPresent();
		if (response.statusCode() != 200 || !"ok\n".equals(response.body()) || limited == c.endsWith("none")) {
			throw new IllegalStateException("Route " + c + " answered " + response.statusCode() + " " + response.headers()
					.map() + " " + response.body());
		}
	}

	static String markdown(Machine machine, String setup, List<Result> results) {
		StringBuilder md = new StringBuilder("# Server MVC benchmark, ").append(machine.dateText()).append("\n\n");
		md.append("- machine: ").append(machine.cores()).append(" cores (nproc), ").append(machine.cpu()).append(", ")
			.append(machine.memory()).append(" RAM, ").append(machine.os()).append(", load average at start ")
			.append(machine.loadAtStart()).append('\n');
		md.append("- software: ").append(machine.java()).append(", ").append(machine.redis()).append(", ")
			.append(machine.wrk()).append('\n');
		md.append("- code: ").append(machine.commit()).append('\n');
		md.append("- command: benchmarks/run-mvc.sh\n");
		md.append("- setup: ").append(setup).append("\n\n");
		Map<String, Result> byRoute = new LinkedHashMap<>();
		results.forEach(r -> byRoute.put(r.route(), r));
		md.append("| route | server | req/s | vs no limiter (same server) | p50 ms | p99 ms | rounds req/s |\n"
				+ "|---|---|---|---|---|---|---|\n");
		for (Result r : results) {
			boolean webflux = r.route().startsWith(WEBFLUX);
			double none = byRoute.get(webflux ? WEBFLUX + "none" : "none").perSecond();
			md.append(String.format("| %s | %s | %,.0f | %.2f | %.2f | %.2f | %s |%n", r.route(),
					webflux ? "WebFlux" : "Server MVC", r.perSecond(), r.perSecond() / none, r.p50Millis(), r.p99Millis(),
					String.join(", ", r.roundRates().stream().map(rate -> String.format("%,.0f", rate)).toList())));
		}
		double mvcRatio = byRoute.get("ours").perSecond() / byRoute.get("none").perSecond();
		double webfluxRatio = byRoute.get(WEBFLUX + "ours").perSecond() / byRoute.get(WEBFLUX + "none").perSecond();
		double bucket4j = byRoute.get("bucket4j").perSecond();
		md.append(String.format("%nours / Bucket4j on Server MVC: %.2f (sliding window counter, the default), %.2f (token "
				+ "bucket, Bucket4j's algorithm). ours / no limiter: Server MVC %.2f, WebFlux %.2f (Server MVC's ratio is "
				+ "%.2f of WebFlux's).%n", byRoute.get("ours").perSecond() / bucket4j,
				byRoute.get("ours-token-bucket").perSecond() / bucket4j, mvcRatio, webfluxRatio, mvcRatio / webfluxRatio));
		md.append(String.format("%nRound by round (a round's cases ran within minutes of each other, so a drift of the machine "
				+ "moves both sides of a ratio alike), median and each round's: ours / Bucket4j %s; ours-token-bucket / "
				+ "Bucket4j %s; ours / no limiter on Server MVC %s, on WebFlux %s.%n",
				roundRatios(byRoute.get("ours"), byRoute.get("bucket4j")),
				roundRatios(byRoute.get("ours-token-bucket"), byRoute.get("bucket4j")),
				roundRatios(byRoute.get("ours"), byRoute.get("none")),
				roundRatios(byRoute.get(WEBFLUX + "ours"), byRoute.get(WEBFLUX + "none"))));
		return md.toString();
	}

	/** The ratio of two routes' req/s in each round: its median in bold, then the rounds'. */
	static String roundRatios(Result of, Result to) {
		List<Double> ratios = new ArrayList<>();
		for (int i = 0; i < of.roundRates().size(); i++) {
			ratios.add(of.roundRates().get(i) / to.roundRates().get(i));
		}
		List<Double> sorted = ratios.stream().sorted().toList();
		int n = sorted.size();
		double median = (n % 2 == 1) ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
		return String.format("**%.2f** (%s)", median,
				String.join(", ", ratios.stream().map(r -> String.format("%.2f", r)).toList()));
	}

	/** gateway-app-mvc's executable jar, or the one {@code bench.mvc-gateway-jar} names. */
	static Path gatewayJar(Path root) throws IOException {
		String given = Settings.string("mvc-gateway-jar", "");
		if (!given.isEmpty()) {
			return Path.of(given).toAbsolutePath();
		}
		List<Path> jars = new ArrayList<>();
		Path target = root.resolve("gateway-app-mvc/target");
		if (Files.isDirectory(target)) {
			try (DirectoryStream<Path> stream = Files.newDirectoryStream(target, "gateway-app-mvc-*.jar")) {
				stream.forEach(jars::add);
			}
		}
		jars.removeIf(jar -> jar.getFileName().toString().matches(".*-(tests|sources|javadoc)\\.jar"));
		if (jars.size() != 1) {
			throw new IllegalStateException("Expected one gateway-app-mvc jar in " + target + ", found " + jars
					+ ": build it with benchmarks/run-mvc.sh");
		}
		return jars.get(0);
	}

}
