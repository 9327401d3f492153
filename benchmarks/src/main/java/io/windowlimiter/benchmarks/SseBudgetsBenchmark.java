package io.windowlimiter.benchmarks;

import java.io.IOException;
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
 * Issue 45: what a limit per model and a budget in money cost on an LLM route's SSE stream, against a token limit,
 * in one run. Four routes to one nginx serving static OpenAI chat completion streams ({@link SseStreams}), each
 * {@code WindowRateLimit} with {@code llm: openai}, a request limit and one more limit far above what is sent:
 * {@code tokens} (a token limit of every model: the reference), {@code tokens-aa} (the same again: the A/A control,
 * which says how far two identical routes read apart), {@code per-model} (a token limit of {@code gpt-4o-mini*},
 * the model the body names) and {@code money} (a {@code unit: usd} limit, the call priced from
 * {@code window-rate-limiter.llm-prices}). Each route is checked first (the stream whole, the route's remaining
 * header going down by what the stream reported, in tokens or in dollars), every case warmed up (2 minutes in all
 * by default, the JIT's time here), then many short cycles of the four back to back (every other one in reverse
 * order), with the gateway's and Redis's CPU per call. The targets: per-model / tokens and money / tokens >= 0.97,
 * the medians of the cycles' ratios, beside the A/A control's. Run with {@code benchmarks/run-sse-budgets.sh}; the
 * report goes to {@code benchmarks/target/reports/<date>-sse-budgets.md}, the current page is
 * {@code benchmarks/results/sse-budgets.md}.
 */
public final class SseBudgetsBenchmark {

	static final List<String> ROUTES = List.of("tokens", "tokens-aa", "per-model", "money");

	static final double TARGET = 0.97;

	/** gpt-4o-mini's prices, USD per million tokens. */
	static final String INPUT_PRICE = "0.15";

	static final String OUTPUT_PRICE = "0.60";

	private SseBudgetsBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		Path root = Path.of(Settings.string("root", ".")).toAbsolutePath().normalize();
		Path workDir = root.resolve("benchmarks/target/bench-work");
		Files.createDirectories(workDir);
		int keys = Settings.integer("keys", 10_000);
		int warmUp = Settings.integer("sse.warmup-seconds", 30);
		int cycles = Settings.integer("sse.cycles", 24);
		int seconds = Settings.integer("sse.cycle-seconds", 2);
		int events = Settings.integer("sse.budget-events", 200);
		String body = SseBenchmark.requestBody(false);
		Wrk wrk = Wrk.forScript(workDir, "sse.lua", body);
		Map<String, List<SseBenchmark.Measured>> runs = new LinkedHashMap<>();
		ROUTES.forEach(route -> runs.put(route, new ArrayList<>()));
		List<String> checks = new ArrayList<>();
		Machine machine;
		long failed;
		SseStreams content = new SseStreams(workDir, List.of(events));
		try (LocalRedis redis = LocalRedis.startOrConnect(workDir);
				Downstream downstream = new Downstream(content.locations(64))) {
			machine = Machine.describe(root, redis.version());
			Path routes = workDir.resolve("gateway-sse-budgets-bench.yml");
			Files.writeString(routes, routes());
			try (GatewayProcess gateway = GatewayProcess.start(RunBenchmarks.gatewayJar(root), redis.port(),
					downstream.uri(), routes, workDir.resolve("gateway-sse-budgets.log"))) {
				for (String route : ROUTES) {
					checks.add(check(gateway, route, events, body));
				}
				checks.forEach(System.out::println);
				redis.flushAll();
				for (String route : ROUTES) {
					wrk.run(gateway.url(path(route, events)), warmUp, keys);
				}
				gateway.failedDecisionsSinceLastCall();
				for (int cycle = 0; cycle < cycles; cycle++) {
					List<String> order = new ArrayList<>(ROUTES);
					if (cycle % 2 == 1) {
						Collections.reverse(order);
					}
					for (String route : order) {
						SseBenchmark.Measured measured = SseBenchmark.Measured.of(wrk, gateway, redis,
								new SseBenchmark.Case(route, events), seconds, keys);
						Wrk.Run run = measured.run();
						if (run.socketErrors() > 0 || run.statusErrors() > 0) {
							throw new IllegalStateException(route + ": " + run.socketErrors() + " socket errors, "
									+ run.statusErrors() + " answers not 2xx");
						}
						runs.get(route).add(measured);
						System.out.printf(Locale.ROOT, "sse-budgets cycle %2d %-9s %,9.0f req/s  p99 %7.2f ms  gateway %6.1f "
								+ "us/call  Redis %5.1f us/call%n", cycle + 1, route, run.perSecond(), run.p99Millis(),
								measured.gatewayMicros(), measured.redisMicros());
					}
				}
				Thread.sleep(600);
				failed = gateway.failedDecisionsSinceLastCall();
			}
		}
		String setup = String.format(Locale.ROOT, "wrk %d threads, %d keep-alive connections; every route warmed up %d s, "
				+ "then %d cycles of the four routes for %d s each (every other cycle in reverse order); gateway-app's jar "
				+ "(%s, its defaults) proxying to nginx on loopback serving a static %d-event OpenAI stream; %,d clients by "
				+ "X-API-Key; each request a %d-byte streaming chat completion POST naming gpt-4o-mini (the gateway adds "
				+ "`include_usage` and strips the usage chunk); every route `llm: openai` with %,d requests a minute and "
				+ "one more limit a minute (sliding window counter) far above what is sent: tokens %,d, per-model %,d "
				+ "tokens of gpt-4o-mini*, money $%s (gpt-4o-mini at $%s / $%s per million tokens in / out)",
				wrk.threads(), wrk.connections(), warmUp, cycles, seconds, GatewayProcess.jvmOptions(), events, keys,
				body.length(), SseBenchmark.REQUEST_LIMIT, SseBenchmark.TOKEN_LIMIT, SseBenchmark.TOKEN_LIMIT, "1000",
				INPUT_PRICE, OUTPUT_PRICE);
		String markdown = markdown(machine, setup, checks, runs, failed);
		ReportFile.write(root, machine.fileStamp() + "-sse-budgets.md", markdown,
				List.of("benchmarks/results/sse-budgets.md"));
		System.exit(0);
	}

	static String path(String route, int events) {
		return "/" + route + "/sse/" + events;
	}

	static String routes() {
		StringBuilder yaml = new StringBuilder();
		yaml.append("# Written by SseBudgetsBenchmark.java; bench.downstream comes on the command line\n");
		yaml.append("logging.level.root: WARN\n");
		yaml.append("window-rate-limiter.llm-prices:\n");
		yaml.append("  \"[gpt-4o-mini]\": { input: ").append(INPUT_PRICE).append(", output: ").append(OUTPUT_PRICE)
			.append(" }\n");
		yaml.append("spring.cloud.gateway.server.webflux.routes:\n");
		// what GatewayProcess asks until the gateway is ready: a route without a limiter
		yaml.append("  - id: none\n    uri: ${bench.downstream}\n    predicates: [ \"Path=/none/**\" ]\n");
		yaml.append("    filters: [ \"StripPrefix=1\" ]\n");
		for (String route : ROUTES) {
			yaml.append("  - id: ").append(route).append('\n');
			yaml.append("    uri: ${bench.downstream}\n");
			yaml.append("    predicates: [ \"Path=/").append(route).append("/**\" ]\n");
			yaml.append("    filters:\n");
			yaml.append("      - StripPrefix=1\n");
			yaml.append("      - name: WindowRateLimit\n");
			yaml.append("        args:\n");
			yaml.append("          key-resolver: \"#{@headerKeyResolver}\"\n");
			yaml.append("          llm: openai\n");
			yaml.append("          limits[0].limit: ").append(SseBenchmark.REQUEST_LIMIT).append('\n');
			yaml.append("          limits[0].window: 1m\n");
			yaml.append("          limits[1].window: 1m\n");
			switch (route) {
				case "per-model" -> yaml.append("          limits[1].limit: ").append(SseBenchmark.TOKEN_LIMIT)
					.append("\n          limits[1].unit: tokens\n          limits[1].model: \"gpt-4o-mini*\"\n");
				case "money" -> yaml.append("          limits[1].limit: 1000\n          limits[1].unit: usd\n");
				default -> yaml.append("          limits[1].limit: ").append(SseBenchmark.TOKEN_LIMIT)
					.append("\n          limits[1].unit: tokens\n");
			}
		}
		return yaml.toString();
	}

	/**
	 * The route passes the stream whole (less the usage chunk the gateway asked for) and its remaining header goes
	 * down by the stream's reported usage, in tokens or, on the money route, by its price in dollars.
	 */
	static String check(GatewayProcess gateway, String route, int events, String body)
			throws IOException, InterruptedException {
		byte[] expected = SseStreams.body(events, false);
		String header = route.equals("money") ? "X-RateLimit-Remaining-Usd" : "X-RateLimit-Remaining-Tokens";
		String key = "check-" + route;
		String[] remaining = new String[2];
		for (int call = 0; call < 2; call++) {
			HttpResponse<byte[]> response = SseBenchmark.post(gateway, path(route, events), key, body);
			String value = response.headers().firstValue(header).orElse("");
			if (response.statusCode() != 200 || response.body().length != expected.length || value.isEmpty()) {
				throw new IllegalStateException("Route " + route + " answered " + response.statusCode() + " "
						+ response.headers().map() + " with " + response.body().length + " bytes, expected "
						+ expected.length + " and " + header);
			}
			remaining[call] = value;
			// the settle is sent after the client has its answer
			Thread.sleep(300);
		}
		return String.format(Locale.ROOT, "check %s: 200, %,d bytes, %s %s then %s (the stream reported %,d tokens)",
				route, expected.length, header, remaining[0], remaining[1], SseStreams.usageTokens(events));
	}

	static String markdown(Machine machine, String setup, List<String> checks,
			Map<String, List<SseBenchmark.Measured>> runs, long failed) {
		StringBuilder md = new StringBuilder("# SSE budgets benchmark: limits per model and in money against a token limit, ")
			.append(machine.dateText()).append("\n\n");
		md.append("- machine: ").append(machine.cores()).append(" cores (nproc), ").append(machine.cpu()).append(", ")
			.append(machine.memory()).append(" RAM, ").append(machine.os()).append(", load average ")
			.append(machine.loadAtStart()).append(" at the start, ").append(Machine.loadAverage()).append(" at the end\n");
		md.append("- software: ").append(machine.java()).append(", ").append(machine.redis()).append(", ")
			.append(machine.wrk()).append('\n');
		md.append("- code: ").append(machine.commit()).append('\n');
		md.append("- command: `").append(Settings.string("command", "benchmarks/run-sse-budgets.sh")).append("`\n");
		md.append("- setup: ").append(setup).append("\n\n");
		md.append("Checked before measuring:\n\n");
		checks.forEach(check -> md.append("- ").append(check).append('\n'));
		md.append("\n## Targets\n\nThe median of the cycles' ratios (each compares runs seconds apart), the middle half "
				+ "beside it; the A/A control is two identical token routes, read the same way.\n\n"
				+ "| ratio | median of cycles | middle half | cycles | goal | verdict |\n|---|---|---|---|---|---|\n");
		List<Double> reference = rates(runs.get("tokens"));
		md.append(row("tokens-aa / tokens (A/A control)", rates(runs.get("tokens-aa")), reference, Double.NaN));
		md.append(row("per-model / tokens", rates(runs.get("per-model")), reference, TARGET));
		md.append(row("money / tokens", rates(runs.get("money")), reference, TARGET));
		if (failed > 0) {
			md.append("| decisions failed open | ").append(failed).append(" | | | 0 | **invalid run** |\n");
		}
		md.append("\n## Throughput and CPU per call\n\nMedians of each route's cycles; CPU from `/proc` (the gateway's JVM) "
				+ "and `INFO cpu` (Redis) during each run, over the calls answered in it.\n\n"
				+ "| route | req/s | p50 ms | p99 ms | gateway us/call | Redis us/call |\n|---|---:|---:|---:|---:|---:|\n");
		runs.forEach((route, list) -> md.append(String.format(Locale.ROOT, "| %s | %,.0f | %.2f | %.2f | %.1f | %.1f |%n",
				route, SseBenchmark.median(rates(list)),
				SseBenchmark.median(list.stream().map(m -> m.run().p50Millis()).toList()),
				SseBenchmark.median(list.stream().map(m -> m.run().p99Millis()).toList()),
				SseBenchmark.median(list.stream().map(SseBenchmark.Measured::gatewayMicros).toList()),
				SseBenchmark.median(list.stream().map(SseBenchmark.Measured::redisMicros).toList()))));
		return md.toString();
	}

	private static List<Double> rates(List<SseBenchmark.Measured> runs) {
		return runs.stream().map(m -> m.run().perSecond()).toList();
	}

	private static String row(String name, List<Double> a, List<Double> b, double goal) {
		List<Double> ratios = SseBenchmark.paired(a, b);
		double median = SseBenchmark.median(ratios);
		String verdict = Double.isNaN(goal) ? "control"
				: (median >= goal) ? "met" : String.format(Locale.ROOT, "**missed** by %.1f%%", 100 * (1 - median / goal));
		return String.format(Locale.ROOT, "| %s | %.3f | %.3f-%.3f | %d | %s | %s |%n", name, median,
				SseBenchmark.quantile(ratios, 0.25), SseBenchmark.quantile(ratios, 0.75), ratios.size(),
				Double.isNaN(goal) ? "" : String.format(Locale.ROOT, ">= %.2f", goal), verdict);
	}

}
