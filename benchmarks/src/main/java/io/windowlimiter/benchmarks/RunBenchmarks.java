package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs the benchmarks of one run against one Redis and writes one report. Arguments pick the parts:
 * {@code decision}, {@code http}, {@code memory}, {@code plans}, {@code scopes}, {@code hot}, {@code profile}, {@code leases}; none
 * means the first three; {@code mvc} and {@code sse} alone run {@link MvcHttpBenchmark} and {@link SseBenchmark},
 * {@code meter} {@link MeterBenchmark}. {@code bench.root} is the project's root (the scripts set it); the report goes
 * to {@code benchmarks/target/reports/<date>.md} there and to standard output ({@link ReportFile}), and the page of
 * each part run, {@code benchmarks/results/<part>.md}, is updated by hand from it. Settings: see {@link Settings}
 * and docs/performance.md.
 */
public final class RunBenchmarks {

	private RunBenchmarks() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length == 1 && args[0].equals("mvc")) {
			// the Server MVC gateway: its own run and report (benchmarks/run-mvc.sh)
			MvcHttpBenchmark.main(args);
			return;
		}
		if (args.length == 1 && args[0].equals("meter")) {
			// the LLM route's meter alone, in this JVM: prints a table (MeterBenchmark)
			MeterBenchmark.main(args);
			return;
		}
		if (args.length == 1 && args[0].equals("sse-budgets")) {
			// limits per model and in money against a token limit on the same stream (benchmarks/run-sse-budgets.sh)
			SseBudgetsBenchmark.main(args);
			return;
		}
		if (args.length == 1 && args[0].equals("sse")) {
			// an LLM route's SSE stream with and without metering: its own run and report (benchmarks/run-sse.sh)
			SseBenchmark.main(args);
			return;
		}
		List<String> parts = (args.length == 0) ? List.of("decision", "memory", "http") : Arrays.asList(args);
		for (String part : parts) {
			if (!List.of("decision", "memory", "http", "plans", "scopes", "hot", "profile", "leases").contains(part)) {
				throw new IllegalArgumentException(
						"Unknown part '" + part + "'; parts are decision, memory, http, plans, scopes, hot, profile, leases");
			}
		}
		Path root = Path.of(Settings.string("root", ".")).toAbsolutePath().normalize();
		Path workDir = root.resolve("benchmarks/target/bench-work");
		Files.createDirectories(workDir);
		Report report;
		try (LocalRedis redis = LocalRedis.startOrConnect(workDir)) {
			report = new Report(Machine.describe(root, redis.version()), Settings.string("command",
					"benchmarks/run-all.sh " + String.join(" ", args)).trim());
			if (parts.contains("decision")) {
				DecisionThroughputBenchmark decisions = new DecisionThroughputBenchmark(redis);
				report.decisions(decisions.run(), decisions.setup());
			}
			if (parts.contains("plans")) {
				PlanBenchmark plans = new PlanBenchmark(redis);
				report.plans(plans.run(), plans.setup());
			}
			if (parts.contains("scopes")) {
				ScopeBenchmark scopes = new ScopeBenchmark(redis);
				report.scopes(scopes.run(), scopes.setup());
			}
			if (parts.contains("hot")) {
				HotClientBenchmark hot = new HotClientBenchmark(redis);
				report.hot(hot.run(), hot.setup());
			}
			if (parts.contains("memory")) {
				report.memory(new MemoryBenchmark(redis).run());
			}
			if (parts.contains("http")) {
				HttpBenchmark http = new HttpBenchmark(redis, workDir, gatewayJar(root));
				report.http(http.run(), http.setup());
				if (!parts.contains("memory")) {
					// issue 47's bytes per client of the fixed window, the way part 3 measures them
					report.memory(new MemoryBenchmark(redis).fixedWindow());
				}
			}
			if (parts.contains("profile")) {
				// beside the report, whose table links them as profiles/<file>
				ProfileBenchmark profile = new ProfileBenchmark(redis, workDir, gatewayJar(root),
						ReportFile.directory(root).resolve("profiles"), report.machine().fileStamp());
				report.profile(profile.run(), profile.setup());
			}
			if (parts.contains("leases")) {
				if (!LeaseCase.chosen().isEmpty()) {
					LeaseBenchmark leases = new LeaseBenchmark(redis, workDir, gatewayJar(root));
					report.leases(leases.run(), leases.setup());
				}
				if (LeaseCase.clusterChosen()) {
					ColdClientBenchmark cold = new ColdClientBenchmark(workDir, gatewayJar(root));
					report.leaseCluster(cold.run(), cold.setup());
				}
			}
		}
		// one page per part: benchmarks/results/decision.md, memory.md, http.md ...
		ReportFile.write(root, report.machine().fileStamp() + ".md", report.markdown(),
				parts.stream().map(part -> "benchmarks/results/" + part + ".md").toList());
		// Lettuce and Reactor Netty leave non-daemon threads behind; the run is over
		System.exit(0);
	}

	/** gateway-app's executable jar, or the one {@code bench.gateway-jar} names. */
	static Path gatewayJar(Path root) throws IOException {
		String given = Settings.string("gateway-jar", "");
		if (!given.isEmpty()) {
			return Path.of(given).toAbsolutePath();
		}
		List<Path> jars = new ArrayList<>();
		Path target = root.resolve("gateway-app/target");
		if (Files.isDirectory(target)) {
			try (DirectoryStream<Path> stream = Files.newDirectoryStream(target, "gateway-app-*.jar")) {
				stream.forEach(jars::add);
			}
		}
		jars.removeIf(jar -> jar.getFileName().toString().matches(".*-(tests|sources|javadoc)\\.jar"));
		if (jars.size() != 1) {
			throw new IllegalStateException("Expected one gateway-app jar in " + target + ", found " + jars
					+ ": build it with mvn -q -B install -DskipTests");
		}
		return jars.get(0);
	}

}
