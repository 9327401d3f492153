package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Issue 24: an LLM route's SSE stream through gateway-app with and without metering, in one run. Three routes to
 * one nginx serving static OpenAI chat completion streams ({@link SseStreams}): {@code plain} (no limiter),
 * {@code limited} ({@code WindowRateLimit} with the metered route's request limit and no {@code llm}: one decision,
 * no body read, no meter, no settle) and {@code metered} ({@code WindowRateLimit} with {@code llm: openai}, a token
 * and a request limit far above what is sent, 10,000 clients by X-API-Key, so every call is admitted, metered and
 * settled); limited / plain is what a decision costs, metered / limited what the LLM path adds. wrk POSTs
 * streaming chat completion requests over keep-alive connections. Every case (route and stream length) is warmed
 * up first; then each length in turn: its three cases warmed again, then many short cycles of the three back to back
 * (every other one in reverse order), so a cycle's ratios compare runs seconds apart; the targets are the medians of
 * the cycles' ratios, the throughput table the medians of each case's cycles, with the gateway's and Redis's CPU
 * per call during each run (they share this machine's cores; the gateway's alone is what bounds a gateway whose
 * Redis runs elsewhere). Then the
 * gateway's live heap per open stream ({@link OpenStreamsMemory}), short and long, plain and metered. Each route is
 * checked first: the body arrives whole (metered: without the usage chunk the gateway asked for), the limited route
 * answers with its request limit's headers, and on the metered route the remaining tokens go down by the usage the
 * stream reported. Run with {@code benchmarks/run-sse.sh}; the report goes to
 * {@code benchmarks/target/reports/<date>-sse.md} ({@link ReportFile}), and the current page,
 * {@code benchmarks/results/sse.md}, is updated by hand from it.
 */
public final class SseBenchmark {

	/** In this order in every length's cases and tables. */
	static final List<String> ROUTES = List.of("plain", "limited", "metered");

	/** The memory part's routes: the limited one holds nothing per stream past its decision. */
	static final List<String> MEMORY_ROUTES = List.of("plain", "metered");

	/** Issue 24: req/s of the route with metering over the same route without, at every stream length. */
	static final double TARGET = 0.90;

	static final long TOKEN_LIMIT = 1_000_000_000L;

	static final long REQUEST_LIMIT = 1_000_000L;

	private SseBenchmark() {
	}

	record Case(String route, int events) {

		String path() {
			return "/" + this.route + "/sse/" + this.events;
		}

	}

	/** A case's medians over its cycles, and each cycle's rate and CPU per call. */
	record Result(Case c, double perSecond, double p50Millis, double p99Millis, List<Double> cycleRates,
			List<Double> gatewayMicros, List<Double> redisMicros) {
	}

	/** One stream length's results, route by route. */
	record Length(Result plain, Result limited, Result metered) {

		/** The results in groups of {@link #ROUTES}, in its order. */
		static List<Length> of(List<Result> results) {
			List<Length> lengths = new ArrayList<>();
			for (int i = 0; i + ROUTES.size() - 1 < results.size(); i += ROUTES.size()) {
				lengths.add(new Length(results.get(i), results.get(i + 1), results.get(i + 2)));
			}
			return lengths;
		}

		String throughputRow() {
			return String.format(Locale.ROOT, "| %,d | %,d | %,.0f | %,.0f | %,.0f | %.2f | %.2f | %.2f | %.2f / %.2f "
					+ "| %.2f / %.2f | %.2f / %.2f | %d |%n", this.plain.c().events(),
					SseStreams.body(this.plain.c().events(), true).length, this.plain.perSecond(), this.limited.perSecond(),
					this.metered.perSecond(), this.limited.perSecond() / this.plain.perSecond(),
					this.metered.perSecond() / this.limited.perSecond(), this.metered.perSecond() / this.plain.perSecond(),
					this.plain.p50Millis(), this.plain.p99Millis(), this.limited.p50Millis(), this.limited.p99Millis(),
					this.metered.p50Millis(), this.metered.p99Millis(), this.plain.cycleRates().size());
		}

		String cpuRow() {
			List<Double> ratios = paired(this.limited.gatewayMicros(), this.metered.gatewayMicros());
			return String.format(Locale.ROOT, "| %,d | %.0f, %.0f, %.0f | %.1f, %.1f | %.3f (%.2f-%.2f) |%n",
					this.plain.c().events(), median(this.plain.gatewayMicros()), median(this.limited.gatewayMicros()),
					median(this.metered.gatewayMicros()), median(this.limited.redisMicros()),
					median(this.metered.redisMicros()), median(ratios), quantile(ratios, 0.25), quantile(ratios, 0.75));
		}

	}

	/** One cycle's run of a case, and the CPU the gateway and Redis used per call during it. */
	record Measured(Wrk.Run run, double gatewayMicros, double redisMicros) {

		static Measured of(Wrk wrk, GatewayProcess gateway, LocalRedis redis, Case c, int seconds, int keys)
				throws IOException, InterruptedException {
			Duration gateway0 = gateway.cpu();
			double redis0 = redis.cpuSeconds();
			Wrk.Run run = wrk.run(gateway.url(c.path()), seconds, keys);
			double redisSeconds = redis.cpuSeconds() - redis0;
			double gatewayMicros = gateway.cpu().minus(gateway0).toNanos() / 1e3;
			long calls = Math.max(1, run.requests());
			return new Measured(run, gatewayMicros / calls, redisSeconds * 1e6 / calls);
		}

	}

	public static void main(String[] args) throws Exception {
		Path root = Path.of(Settings.string("root", ".")).toAbsolutePath().normalize();
		Path workDir = root.resolve("benchmarks/target/bench-work");
		Files.createDirectories(workDir);
		int keys = Settings.integer("keys", 10_000);
		// C2, sharing the cores with a saturated gateway, compiles a route's hot paths for about a minute (throughput
		// still climbing 50 s into a route's load): every case is warmed up, then each length's again before its cycles
		int warmUp = Settings.integer("sse.warmup-seconds", 20);
		// short runs back to back: this machine's speed drifts by tens of percent over minutes (rounds of 8 s runs
		// minutes apart gave ratios from 0.75 to 1.21); runs seconds apart drift together (metered against an
		// identical metered route: medians 0.996 and 0.999)
		int cycles = Settings.integer("sse.cycles", 24);
		int seconds = Settings.integer("sse.cycle-seconds", 2);
		List<Integer> lengths = integers(Settings.string("sse.events", "20,200,2000"));
		// 0: no memory part
		List<Integer> memoryLengths = integers(Settings.string("sse.memory-events", "20,2000")).stream()
			.filter(events -> events > 0)
			.toList();
		int streams = Settings.integer("sse.streams", 200);
		int tailRate = Settings.integer("sse.tail-rate", 64);
		boolean includeUsage = Boolean.parseBoolean(Settings.string("sse.include-usage", "false"));
		String body = requestBody(includeUsage);
		Wrk wrk = Wrk.forScript(workDir, "sse.lua", body);
		List<Case> cases = new ArrayList<>();
		for (int events : lengths) {
			ROUTES.forEach(route -> cases.add(new Case(route, events)));
		}
		Map<Case, List<Measured>> runs = new LinkedHashMap<>();
		cases.forEach(c -> runs.put(c, new ArrayList<>()));
		Map<Integer, Long> failed = new LinkedHashMap<>();
		List<OpenStreamsMemory.Result> memory = new ArrayList<>();
		List<String> checks = new ArrayList<>();
		Machine machine;
		List<Integer> allLengths = new ArrayList<>(lengths);
		memoryLengths.stream().filter(n -> !allLengths.contains(n)).forEach(allLengths::add);
		SseStreams content = new SseStreams(workDir, allLengths);
		try (LocalRedis redis = LocalRedis.startOrConnect(workDir);
				Downstream downstream = new Downstream(content.locations(tailRate))) {
			machine = Machine.describe(root, redis.version());
			Path routes = workDir.resolve("gateway-sse-bench.yml");
			Files.writeString(routes, routes());
			try (GatewayProcess gateway = GatewayProcess.start(RunBenchmarks.gatewayJar(root), redis.port(),
					downstream.uri(), routes, workDir.resolve("gateway-sse.log"))) {
				for (int events : allLengths) {
					checks.add(checkPlain(gateway, events, body));
					checks.add(checkLimited(gateway, events, body));
					checks.add(checkMetered(gateway, events, body, includeUsage));
				}
				checks.forEach(System.out::println);
				for (Case c : cases) {
					wrk.run(gateway.url(c.path()), warmUp, keys);
				}
				for (int events : lengths) {
					List<Case> block = cases.stream().filter(c -> c.events() == events).toList();
					redis.flushAll();
					for (Case c : block) {
						wrk.run(gateway.url(c.path()), warmUp, keys);
					}
					gateway.failedDecisionsSinceLastCall();
					for (int cycle = 0; cycle < cycles; cycle++) {
						List<Case> order = new ArrayList<>(block);
						if (cycle % 2 == 1) {
							Collections.reverse(order);
						}
						for (Case c : order) {
							Measured measured = Measured.of(wrk, gateway, redis, c, seconds, keys);
							Wrk.Run run = measured.run();
							if (run.socketErrors() > 0 || run.statusErrors() > 0) {
								throw new IllegalStateException(c + ": " + run.socketErrors() + " socket errors, "
										+ run.statusErrors() + " answers not 2xx");
							}
							runs.get(c).add(measured);
							System.out.printf(Locale.ROOT, "sse cycle %2d %-8s %5d events %,9.0f req/s  p50 %7.2f ms  p99 %7.2f ms"
									+ "  gateway %6.1f us/call  Redis %5.1f us/call%n", cycle + 1, c.route(), c.events(),
									run.perSecond(), run.p50Millis(), run.p99Millis(), measured.gatewayMicros(),
									measured.redisMicros());
						}
					}
					// the limiter reports failures at most every 500 ms
					Thread.sleep(600);
					failed.put(events, gateway.failedDecisionsSinceLastCall());
				}
				OpenStreamsMemory open = new OpenStreamsMemory(gateway, redis, streams, body);
				for (int events : memoryLengths) {
					for (String route : MEMORY_ROUTES) {
						int expected = expectedBody(route, events, includeUsage).length;
						OpenStreamsMemory.Result result = open.measure(route, events, expected);
						memory.add(result);
						System.out.printf(Locale.ROOT, "sse memory %-8s %5d events: %,.0f bytes of live heap per open stream "
								+ "(%,.0f in io.windowlimiter.* objects), %,d bytes read each%n", route, events,
								result.heapBytesPerStream(), result.ourBytesPerStream(), result.bytesReadPerStream());
					}
				}
			}
		}
		List<Result> results = new ArrayList<>();
		runs.forEach((c, list) -> {
			List<Wrk.Run> done = list.stream().map(Measured::run).toList();
			results.add(new Result(c, median(done.stream().map(Wrk.Run::perSecond).toList()),
					median(done.stream().map(Wrk.Run::p50Millis).toList()), median(done.stream().map(Wrk.Run::p99Millis).toList()),
					done.stream().map(Wrk.Run::perSecond).toList(), list.stream().map(Measured::gatewayMicros).toList(),
					list.stream().map(Measured::redisMicros).toList()));
		});
		String setup = String.format(Locale.ROOT, "wrk %d threads, %d keep-alive connections; every case warmed up "
				+ "%d s, then per length its three cases %d s each again and %d cycles of the three for %d s each (every "
				+ "other cycle in reverse order); targets from the median of the cycles' ratios, the throughput table from "
				+ "each case's medians; gateway-app's jar (%s, its defaults) proxying to nginx on loopback "
				+ "serving static files, Redis flushed before each length; %,d clients by X-API-Key; each request a "
				+ "%d-byte streaming chat completion POST (%s); metered: `llm: openai`, %,d tokens and %,d requests per "
				+ "minute per client (sliding window counter), so every call is admitted and settled; limited: the "
				+ "same request limit without `llm` (one decision per call, no body read, no meter, no settle)",
				wrk.threads(), wrk.connections(), warmUp, warmUp, cycles, seconds, GatewayProcess.jvmOptions(), keys,
				body.length(), includeUsage ? "it asks for `stream_options.include_usage`"
						: "no `stream_options`: the gateway adds `include_usage` upstream and strips the usage chunk",
				TOKEN_LIMIT, REQUEST_LIMIT);
		String memorySetup = String.format(Locale.ROOT, "%d streams opened at once per case on `/slow/<n>`: nginx "
				+ "sends all but the last %,d bytes of the stream at once, then %d bytes/s, so the streams stay open "
				+ "for about %d s after most of their bytes passed the meter. Once every stream has received all but "
				+ "its tail, `jcmd <gateway> GC.class_histogram` (a full GC, then every live object) is compared with "
				+ "the same taken just before the streams opened: the growth over the streams is the live heap one open "
				+ "stream holds, in the gateway's JVM (Netty's pooled direct buffers are off-heap and not in it). "
				+ "`io.windowlimiter.*` counts only instances of this project's classes (shallow sizes; arrays they own "
				+ "count as `[B` etc.)", streams, SseStreams.TAIL_BYTES, tailRate, SseStreams.TAIL_BYTES / tailRate);
		String markdown = markdown(machine, setup, memorySetup, checks, results, failed, memory);
		ReportFile.write(root, machine.fileStamp() + "-sse.md", markdown, List.of("benchmarks/results/sse.md"));
		System.exit(0);
	}

	/** A chat completion request as an SDK sends it when streaming; with or without asking for the usage. */
	static String requestBody(boolean includeUsage) {
		return "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"system\",\"content\":\"You are a helpful "
				+ "assistant.\"},{\"role\":\"user\",\"content\":\"Write a short poem about rate limits.\"}],"
				+ "\"max_tokens\":2048,\"temperature\":0.7,\"stream\":true"
				+ (includeUsage ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
	}

	/** What a client receives: the stream as served, but without the usage chunk it did not ask for when metered. */
	static byte[] expectedBody(String route, int events, boolean includeUsage) {
		return SseStreams.body(events, !route.equals("metered") || includeUsage);
	}

	static String routes() {
		StringBuilder yaml = new StringBuilder();
		yaml.append("# Written by the SSE benchmark (SseBenchmark.java); bench.downstream comes on the command line\n");
		yaml.append("logging.level.root: WARN\n");
		yaml.append("spring.cloud.gateway.server.webflux.routes:\n");
		for (String route : List.of("none", "plain", "limited", "metered")) {
			yaml.append("  - id: ").append(route).append('\n');
			yaml.append("    uri: ${bench.downstream}\n");
			yaml.append("    predicates: [ \"Path=/").append(route).append("/**\" ]\n");
			yaml.append("    filters:\n");
			yaml.append("      - StripPrefix=1\n");
			if (route.equals("metered")) {
				yaml.append("      - name: WindowRateLimit\n");
				yaml.append("        args:\n");
				yaml.append("          key-resolver: \"#{@headerKeyResolver}\"\n");
				yaml.append("          llm: openai\n");
				yaml.append("          limits[0].limit: ").append(TOKEN_LIMIT).append('\n');
				yaml.append("          limits[0].window: 1m\n");
				yaml.append("          limits[0].unit: tokens\n");
				yaml.append("          limits[1].limit: ").append(REQUEST_LIMIT).append('\n');
				yaml.append("          limits[1].window: 1m\n");
			}
			if (route.equals("limited")) {
				yaml.append("      - name: WindowRateLimit\n");
				yaml.append("        args:\n");
				yaml.append("          key-resolver: \"#{@headerKeyResolver}\"\n");
				yaml.append("          limits[0].limit: ").append(REQUEST_LIMIT).append('\n');
				yaml.append("          limits[0].window: 1m\n");
			}
		}
		return yaml.toString();
	}

	/** The plain route passes the stream byte for byte and has no limiter's headers. */
	static String checkPlain(GatewayProcess gateway, int events, String body) throws IOException, InterruptedException {
		HttpResponse<byte[]> response = post(gateway, "/plain/sse/" + events, "check-plain", body);
		byte[] expected = expectedBody("plain", events, false);
		if (response.statusCode() != 200 || !Arrays.equals(response.body(), expected)
				|| response.headers().firstValue("X-RateLimit-Remaining").isPresent()) {
			throw new IllegalStateException("Route plain, " + events + " events, answered " + response.statusCode() + " "
					+ response.headers().map() + " with " + response.body().length + " bytes, expected " + expected.length);
		}
		return String.format(Locale.ROOT, "check plain %d events: 200, %,d bytes as served, %s", events,
				response.body().length, response.headers().firstValue("Content-Type").orElse("no Content-Type"));
	}

	/** The limited route passes the stream byte for byte with its request limit's headers and no token header. */
	static String checkLimited(GatewayProcess gateway, int events, String body) throws IOException, InterruptedException {
		HttpResponse<byte[]> response = post(gateway, "/limited/sse/" + events, "check-limited", body);
		byte[] expected = expectedBody("limited", events, false);
		String remaining = response.headers().firstValue("X-RateLimit-Remaining").orElse("");
		if (response.statusCode() != 200 || !Arrays.equals(response.body(), expected) || remaining.isEmpty()
				|| response.headers().firstValue("X-RateLimit-Remaining-Tokens").isPresent()) {
			throw new IllegalStateException("Route limited, " + events + " events, answered " + response.statusCode()
					+ " " + response.headers().map() + " with " + response.body().length + " bytes, expected "
					+ expected.length + " and X-RateLimit-Remaining without -Tokens");
		}
		return String.format(Locale.ROOT, "check limited %d events: 200, %,d bytes as served, X-RateLimit-Remaining %s",
				events, response.body().length, remaining);
	}

	/**
	 * The metered route passes the stream whole (without the usage chunk when the client did not ask for it),
	 * and its X-RateLimit-Remaining-Tokens goes down by the stream's reported usage from one call to the next of
	 * the same client (a minute boundary between the two weighs the previous window: tried again).
	 */
	static String checkMetered(GatewayProcess gateway, int events, String body, boolean includeUsage)
			throws IOException, InterruptedException {
		byte[] expected = expectedBody("metered", events, includeUsage);
		String last = "";
		for (int attempt = 1; attempt <= 3; attempt++) {
			String key = "check-metered-" + events + "-" + attempt;
			long[] remaining = new long[2];
			for (int call = 0; call < 2; call++) {
				HttpResponse<byte[]> response = post(gateway, "/metered/sse/" + events, key, body);
				String header = response.headers().firstValue("X-RateLimit-Remaining-Tokens").orElse("");
				if (response.statusCode() != 200 || !Arrays.equals(response.body(), expected) || header.isEmpty()) {
					throw new IllegalStateException("Route metered, " + events + " events, answered "
							+ response.statusCode() + " " + response.headers().map() + " with " + response.body().length
							+ " bytes, expected " + expected.length + " and X-RateLimit-Remaining-Tokens");
				}
				remaining[call] = Long.parseLong(header);
				// the settle is sent after the client has its answer
				Thread.sleep(300);
			}
			long down = remaining[0] - remaining[1];
			last = String.format(Locale.ROOT, "check metered %d events: 200, %,d bytes (%s), X-RateLimit-Remaining-Tokens "
					+ "%,d then %,d: down by %,d, the stream's reported usage %,d", events, expected.length,
					includeUsage ? "as served" : "as served less the usage chunk", remaining[0], remaining[1], down,
					SseStreams.usageTokens(events));
			if (down == SseStreams.usageTokens(events)) {
				return last;
			}
		}
		throw new IllegalStateException("The metered route did not settle to the usage: " + last);
	}

	static HttpResponse<byte[]> post(GatewayProcess gateway, String path, String key, String body)
			throws IOException, InterruptedException {
		return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
			.send(HttpRequest.newBuilder(URI.create(gateway.url(path)))
				.header("X-API-Key", key)
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(body))
				.timeout(Duration.ofSeconds(30))
				.build(), HttpResponse.BodyHandlers.ofByteArray());
	}

	static String markdown(Machine machine, String setup, String memorySetup, List<String> checks, List<Result> results,
			Map<Integer, Long> failed, List<OpenStreamsMemory.Result> memory) {
		StringBuilder md = new StringBuilder("# SSE benchmark: an LLM route with and without metering, ")
			.append(machine.dateText()).append("\n\n");
		md.append("- machine: ").append(machine.cores()).append(" cores (nproc), ").append(machine.cpu()).append(", ")
			.append(machine.memory()).append(" RAM, ").append(machine.os()).append(", load average ")
			.append(machine.loadAtStart()).append(" at the start, ").append(Machine.loadAverage()).append(" at the end\n");
		md.append("- software: ").append(machine.java()).append(", ").append(machine.redis()).append(", ")
			.append(machine.wrk()).append('\n');
		md.append("- code: ").append(machine.commit()).append('\n');
		md.append("- command: `").append(Settings.string("command", "benchmarks/run-sse.sh")).append("`\n");
		md.append("- setup: ").append(setup).append("\n\n");
		md.append("Checked before measuring:\n\n");
		checks.forEach(check -> md.append("- ").append(check).append('\n'));
		md.append("\n## Targets\n\nEach cycle runs a length's three routes one after the other for a few seconds each, so "
				+ "a cycle's ratio compares runs seconds apart, which this machine's drift (tens of percent over minutes) "
				+ "moves together; the median of the cycles' ratios is the figure, the middle half of them beside it. The "
				+ "issue's comparison is the route with and without metering: metered / limited. Metered / plain adds the "
				+ "decision itself, whose cost the HTTP benchmark compares with no limiter and the built-in one; it is held "
				+ "to the same goal here for reference.\n\n"
				+ "| target | median of cycles | middle half | cycles | goal | verdict |\n|---|---|---|---|---|---|\n");
		List<Length> lengths = Length.of(results);
		for (Length length : lengths) {
			md.append(targetRow("metered / limited", length.metered(), length.limited()));
			md.append(targetRow("metered / plain (reference)", length.metered(), length.plain()));
		}
		failed.forEach((events, count) -> {
			if (count > 0) {
				md.append(String.format(Locale.ROOT, "| decisions failed open, %,d events | %d | | | 0 | **invalid run** |%n",
						events, count));
			}
		});
		md.append("\n## Throughput\n\n| events | bytes | plain req/s | limited req/s | metered req/s | limited / plain "
				+ "| metered / limited | metered / plain | plain p50 / p99 ms | limited p50 / p99 ms | metered p50 / p99 ms "
				+ "| cycles |\n"
				+ "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|\n");
		lengths.forEach(length -> md.append(length.throughputRow()));
		md.append("\nEach case's req/s, p50 and p99: the medians of its cycles. limited / plain: what one decision costs; metered / limited: what the LLM path adds to it (the token "
				+ "limit in the same decision, the body read and rewritten, the meter, the settle); metered / plain: the two together.\n");
		md.append("\n## CPU per call\n\nThe gateway's CPU (its JVM's, from `/proc`) and Redis's (`INFO cpu`) during "
				+ "each cycle's run, divided by the calls answered in it; medians of the cycles. Here the gateway, Redis, "
				+ "nginx and wrk share the machine's cores, so what Redis spends on a call is taken from the gateway's "
				+ "throughput; where Redis runs on a host of its own, the gateway's CPU per call alone bounds its "
				+ "throughput. The last column is for reference, not the target: the median of the cycles' limited / "
				+ "metered gateway CPU per call (the throughput ratio a gateway bound by its own CPU would see), and its "
				+ "middle half.\n\n| events | gateway us/call plain, limited, metered | Redis us/call limited, metered "
				+ "| gateway CPU per call, limited / metered |\n|---:|---|---|---|\n");
		lengths.forEach(length -> md.append(length.cpuRow()));
		md.append("\n## Memory per open stream\n\n").append(memorySetup).append(".\n\n");
		md.append("| events | route | streams | bytes read per stream | live heap per open stream | of which io.windowlimiter.* "
				+ "| metered - plain |\n|---:|---|---:|---:|---:|---:|---:|\n");
		for (int i = 0; i < memory.size(); i++) {
			OpenStreamsMemory.Result m = memory.get(i);
			String extra = "";
			if (m.route().equals("metered") && i > 0 && memory.get(i - 1).events() == m.events()) {
				extra = String.format(Locale.ROOT, "%,.0f", m.heapBytesPerStream() - memory.get(i - 1).heapBytesPerStream());
			}
			md.append(String.format(Locale.ROOT, "| %,d | %s | %d | %,d | %,.0f | %,.0f | %s |%n", m.events(), m.route(),
					m.streams(), m.bytesReadPerStream(), m.heapBytesPerStream(), m.ourBytesPerStream(), extra));
		}
		return md.toString();
	}

	/** One target's row: the median of the per-cycle ratios of {@code a} to {@code b}, and their middle half. */
	private static String targetRow(String name, Result a, Result b) {
		List<Double> ratios = paired(a.cycleRates(), b.cycleRates());
		double median = median(ratios);
		String verdict = (median >= TARGET) ? String.format(Locale.ROOT, "met, %.0f%% above", 100 * (median / TARGET - 1))
				: String.format(Locale.ROOT, "**missed** by %.0f%%", 100 * (1 - median / TARGET));
		return String.format(Locale.ROOT, "| req/s %s, %,d events | %.3f | %.2f-%.2f | %d | >= %.2f | %s |%n", name,
				a.c().events(), median, quantile(ratios, 0.25), quantile(ratios, 0.75), ratios.size(), TARGET, verdict);
	}

	/** Cycle by cycle, {@code a}'s figure over {@code b}'s. */
	static List<Double> paired(List<Double> a, List<Double> b) {
		List<Double> ratios = new ArrayList<>();
		for (int r = 0; r < Math.min(a.size(), b.size()); r++) {
			ratios.add(a.get(r) / b.get(r));
		}
		return ratios;
	}

	static double median(List<Double> values) {
		return quantile(values, 0.5);
	}

	/** The q-quantile, interpolated between the two nearest of the sorted values. */
	static double quantile(List<Double> values, double q) {
		List<Double> sorted = values.stream().sorted().toList();
		double at = q * (sorted.size() - 1);
		int below = (int) Math.floor(at);
		int above = Math.min(below + 1, sorted.size() - 1);
		return sorted.get(below) + (at - below) * (sorted.get(above) - sorted.get(below));
	}

	private static List<Integer> integers(String list) {
		return Arrays.stream(list.split(",")).map(String::trim).filter(s -> !s.isEmpty()).map(Integer::parseInt).toList();
	}

}
