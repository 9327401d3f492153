package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Part 7: where a request's CPU goes. gateway-app under wrk (10,000 clients, all allowed) with no
 * limiter, each algorithm and the built-in, one case after another, after a warm-up pass over all of
 * them. Per case: each process's CPU per request from a run without the profiler (the gateway from
 * {@code /proc}, Redis from {@code INFO cpu}, the downstream (nginx) from {@code /proc}, wrk as this JVM's reaped
 * child); then the same load again with async-profiler (the {@code tools.profiler:async-profiler} jar's
 * {@code libasyncProfiler.so}, attached with {@code jcmd JVMTI.agent_load}) sampling the gateway, whose
 * samples split its measured CPU by the component of their innermost frame, and a flame graph written beside the
 * report, in {@code benchmarks/target/reports/profiles} (the page {@code benchmarks/results/profile.md} keeps the
 * ones it cites in {@code benchmarks/results/profiles}). Everything shares the same cores, so with the machine
 * saturated req/s follows the inverse of the total CPU per request: the component rows say what the limiter's
 * extra cost is made of.
 */
final class ProfileBenchmark {

	/** Components by the package prefix of a frame, the first match from the leaf up naming the sample's owner. */
	static final Map<String, String> COMPONENTS = components();

	static final String JDK = "JDK (java.*, jdk.*, sun.*)";

	static final String GC = "GC";

	static final String JIT = "JIT compiler";

	static final String OTHER = "other (VM, native, kernel only)";

	/** What one case measured; CPU figures are microseconds per request. */
	record Result(HttpCase httpCase, double perSecond, double profiledPerSecond, Map<String, Double> processMicros,
			Map<String, Double> componentMicros, double libraryInclusiveMicros, double lettuceInclusiveMicros,
			Path flameGraph) {

		double totalMicros() {
			return this.processMicros.values().stream().mapToDouble(Double::doubleValue).sum();
		}

	}

	private final LocalRedis redis;

	private final Path workDir;

	private final Path gatewayJar;

	private final Path flameGraphs;

	private final String stamp;

	private final int keys = Settings.integer("keys", 10_000);

	private final int seconds = Settings.integer("profile.seconds", 15);

	private final int warmUpSeconds = Settings.integer("profile.warmup-seconds", 10);

	private final int intervalMillis = Settings.integer("profile.interval-millis", 5);

	private final Wrk wrk;

	private String setup = "";

	ProfileBenchmark(LocalRedis redis, Path workDir, Path gatewayJar, Path flameGraphs, String stamp) throws IOException {
		this.redis = redis;
		this.workDir = workDir;
		this.gatewayJar = gatewayJar;
		this.flameGraphs = flameGraphs;
		this.stamp = stamp;
		this.wrk = Wrk.forClients(workDir);
	}

	String setup() {
		return this.setup;
	}

	List<Result> run() throws IOException, InterruptedException {
		List<HttpCase> cases = HttpCase.all().stream()
			.filter(c -> !c.flood() && (!c.ours() || c.limit() == Settings.allowedLimit()))
			.toList();
		Path routes = this.workDir.resolve("gateway-profile.yml");
		Files.writeString(routes, GatewayRoutes.yaml(cases));
		Path agent = extractAgent();
		Files.createDirectories(this.flameGraphs);
		this.setup = String.format(Locale.ROOT, "wrk %d threads, %d connections, %,d clients by X-API-Key, limits of "
				+ "%,d per %s; gateway-app's JVM (%s); nginx on loopback as the downstream. A warm-up pass of "
				+ "%d s over every case, then per case: %d s warm-up, %d s measured (CPU of each process), %d s again under "
				+ "async-profiler (event cpu every %d ms, attached with jcmd)", this.wrk.threads(),
				this.wrk.connections(), this.keys, Settings.allowedLimit(), GatewayRoutes.ALLOWED_WINDOW,
				GatewayProcess.jvmOptions(), this.warmUpSeconds, this.warmUpSeconds,
				this.seconds, this.seconds, this.intervalMillis);
		List<Result> results = new ArrayList<>();
		try (Downstream downstream = new Downstream();
				GatewayProcess gateway = GatewayProcess.start(this.gatewayJar, this.redis.port(), downstream.uri(), routes,
						this.workDir.resolve("gateway-profile.log"))) {
			for (HttpCase c : cases) {
				HttpBenchmark.check(gateway, c);
			}
			// A pass over every case first: the JIT compiles the shared paths while one case runs, which
			// would otherwise be charged to the cases profiled first
			for (HttpCase c : cases) {
				this.wrk.run(gateway.url(c.path()), this.warmUpSeconds, this.keys);
			}
			gateway.failedDecisionsSinceLastCall();
			for (HttpCase c : cases) {
				this.redis.flushAll();
				this.wrk.run(gateway.url(c.path()), this.warmUpSeconds, this.keys);
				results.add(profile(gateway, downstream, agent, c));
			}
			// A decision that failed open is a fast 200 that never reached Redis: the figures would flatter us.
			// The limiter reports failures at most every 500 ms.
			Thread.sleep(600);
			long failed = gateway.failedDecisionsSinceLastCall();
			if (failed > 0) {
				throw new IllegalStateException(failed + " decisions failed open while profiling; see gateway-profile.log");
			}
		}
		this.redis.flushAll();
		return results;
	}

	private Result profile(GatewayProcess gateway, Downstream downstream, Path agent, HttpCase c) throws IOException, InterruptedException {
		// First without the profiler: its sampling costs CPU of its own (measured: 1 ms samples made the gateway's
		// CPU per request 2 to 3 times larger), so the CPU per process comes from a run it does not touch
		ProcessCpu before = ProcessCpu.read(gateway, this.redis, downstream);
		Wrk.Run run = this.wrk.run(gateway.url(c.path()), this.seconds, this.keys);
		HttpBenchmark.validate(c, run);
		Map<String, Double> processes = before.microsPerRequest(ProcessCpu.read(gateway, this.redis, downstream),
				run.requests());

		// Then the same load under the profiler, whose samples split the gateway's CPU measured above
		Path collapsed = this.workDir.resolve("profile-" + c.routeId() + ".collapsed");
		Path html = this.flameGraphs.resolve(this.stamp + "-" + c.routeId() + ".html");
		// cpu (perf_events' cpu-clock, a high-resolution timer) samples as often as asked; itimer fires only on
		// the kernel's tick (250 Hz here) and saw about a quarter of the gateway's CPU
		agent(gateway, agent, "start,event=cpu,interval=" + this.intervalMillis + "ms");
		Wrk.Run profiled = this.wrk.run(gateway.url(c.path()), this.seconds, this.keys);
		HttpBenchmark.validate(c, profiled);
		agent(gateway, agent, "dump,file=" + collapsed);
		agent(gateway, agent, "stop,file=" + html);
		Samples samples = Samples.read(collapsed);
		double gatewayMicros = processes.get("gateway");
		double perSample = gatewayMicros / samples.total();
		Map<String, Double> components = new LinkedHashMap<>();
		samples.byComponent().forEach((component, count) -> components.put(component, count * perSample));
		Result result = new Result(c, run.perSecond(), profiled.perSecond(), processes, components,
				samples.through("io.windowlimiter") * perSample, samples.through("io.lettuce") * perSample, html);
		System.out.printf(Locale.ROOT, "profile  %-30s %,9.0f req/s (%,.0f profiled, %,d samples)  CPU per request: "
				+ "gateway %.0f us, Redis %.0f us, total %.0f us%n", c.routeId(), run.perSecond(), profiled.perSecond(),
				samples.total(), gatewayMicros, processes.get("Redis"), result.totalMicros());
		return result;
	}

	/** Loads async-profiler into the gateway's JVM (again, if loaded) with one command. */
	private static void agent(GatewayProcess gateway, Path agent, String command) throws IOException, InterruptedException {
		// The quotes keep jcmd from reading "event=..." as an argument of its own
		Process jcmd = new ProcessBuilder("jcmd", Long.toString(gateway.pid()), "JVMTI.agent_load", agent.toString(),
				"\"" + command + "\"").redirectErrorStream(true).start();
		String output = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (jcmd.waitFor() != 0 || !output.contains("return code: 0")) {
			throw new IllegalStateException("async-profiler '" + command + "' failed: " + output);
		}
	}

	/** The profiler's library, taken out of the async-profiler jar on this jar's class path. */
	private Path extractAgent() throws IOException {
		Path agent = this.workDir.resolve("libasyncProfiler.so");
		try (InputStream in = ProfileBenchmark.class.getResourceAsStream("/linux-x64/libasyncProfiler.so")) {
			if (in == null) {
				throw new IllegalStateException("No linux-x64/libasyncProfiler.so on the class path (async-profiler jar)");
			}
			Files.copy(in, agent, StandardCopyOption.REPLACE_EXISTING);
		}
		return agent;
	}

	private static Map<String, String> components() {
		Map<String, String> components = new LinkedHashMap<>();
		components.put("io.windowlimiter.", "this library");
		components.put("io.lettuce.", "Lettuce");
		components.put("org.springframework.data.redis.", "Spring Data Redis");
		components.put("io.github.resilience4j.", "Resilience4j");
		components.put("com.github.benmanes.caffeine.", "Caffeine");
		components.put("io.micrometer.", "Micrometer");
		components.put("org.springframework.cloud.gateway.", "Spring Cloud Gateway");
		components.put("reactor.netty.", "Reactor Netty");
		components.put("reactor.", "Reactor Core");
		components.put("io.netty.", "Netty");
		components.put("org.springframework.", "Spring (web, core, boot)");
		return components;
	}

	/** A profile in async-profiler's collapsed form: one line per stack, frames root first, then its count. */
	record Samples(List<String[]> stacks, List<Long> counts) {

		static Samples read(Path collapsed) throws IOException {
			List<String[]> stacks = new ArrayList<>();
			List<Long> counts = new ArrayList<>();
			for (String line : Files.readAllLines(collapsed)) {
				int space = line.lastIndexOf(' ');
				if (space > 0) {
					stacks.add(line.substring(0, space).replace('/', '.').split(";"));
					counts.add(Long.parseLong(line.substring(space + 1).trim()));
				}
			}
			return new Samples(stacks, counts);
		}

		/** Samples by the component of their innermost frame that has one; the JDK, GC, JIT or other if none. */
		Map<String, Long> byComponent() {
			Map<String, Long> result = new LinkedHashMap<>();
			COMPONENTS.values().forEach(component -> result.put(component, 0L));
			List.of(JDK, GC, JIT, OTHER).forEach(component -> result.put(component, 0L));
			for (int i = 0; i < this.stacks.size(); i++) {
				result.merge(owner(this.stacks.get(i)), this.counts.get(i), Long::sum);
			}
			return result;
		}

		long total() {
			return this.counts.stream().mapToLong(Long::longValue).sum();
		}

		/** Samples with a frame of {@code prefix} anywhere in their stack. */
		long through(String prefix) {
			long count = 0;
			for (int i = 0; i < this.stacks.size(); i++) {
				for (String frame : this.stacks.get(i)) {
					if (frame.startsWith(prefix)) {
						count += this.counts.get(i);
						break;
					}
				}
			}
			return count;
		}

		private static String owner(String[] stack) {
			boolean java = false;
			for (int i = stack.length - 1; i >= 0; i--) {
				String frame = stack[i];
				for (Map.Entry<String, String> component : COMPONENTS.entrySet()) {
					if (frame.startsWith(component.getKey())) {
						return component.getValue();
					}
				}
				java |= frame.startsWith("java.") || frame.startsWith("jdk.") || frame.startsWith("sun.");
			}
			String all = String.join(";", stack);
			if (java) {
				return JDK;
			}
			if (all.contains("CompileBroker") || all.contains("C2Compiler") || all.contains("C1Compiler")) {
				return JIT;
			}
			if (all.contains("GC") || all.contains("G1") || all.contains("Gang")) {
				return GC;
			}
			return OTHER;
		}

	}

}
