package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs {@code wrk} (Debian's package) with the benchmark's Lua script and reads the one line its
 * {@code done()} prints: requests, duration, latency percentiles and error counts.
 */
final class Wrk {

	/** What one wrk run measured. */
	record Run(long requests, double seconds, double p50Millis, double p99Millis, long statusErrors,
			long socketErrors) {

		double perSecond() {
			return this.requests / this.seconds;
		}

	}

	private final Path script;

	private final int threads;

	private final int connections;

	/** Script arguments after the client count and prefix. */
	private final List<String> scriptArgs;

	/** wrk with the benchmark's client script (copied into {@code workDir}) and the HTTP part's threads and connections. */
	static Wrk forClients(Path workDir) throws IOException {
		return forScript(workDir, "clients.lua");
	}

	/** wrk with the client script and {@code connections} rather than the HTTP part's default. */
	static Wrk forClients(Path workDir, int connections) throws IOException {
		Wrk wrk = forClients(workDir);
		return new Wrk(wrk.script, wrk.threads, connections, wrk.scriptArgs);
	}

	/** wrk with the client script, {@code threads} and {@code connections} rather than the HTTP part's defaults. */
	static Wrk forClients(Path workDir, int threads, int connections) throws IOException {
		Wrk wrk = forClients(workDir);
		return new Wrk(wrk.script, threads, connections, wrk.scriptArgs);
	}

	/**
	 * wrk with one of the benchmark's scripts (a resource beside this class, copied into {@code workDir}), the HTTP
	 * part's threads and connections, and {@code scriptArgs} after the client count and prefix.
	 */
	static Wrk forScript(Path workDir, String resource, String... scriptArgs) throws IOException {
		Path script = workDir.resolve(resource);
		try (InputStream in = Wrk.class.getResourceAsStream(resource)) {
			Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
		}
		return new Wrk(script, Settings.integer("http.threads", 2), Settings.integer("http.connections", 64),
				List.of(scriptArgs));
	}

	private Wrk(Path script, int threads, int connections, List<String> scriptArgs) {
		this.script = script;
		this.threads = threads;
		this.connections = connections;
		this.scriptArgs = scriptArgs;
	}

	int threads() {
		return this.threads;
	}

	int connections() {
		return this.connections;
	}

	/** Loads {@code url} for {@code seconds} from {@code clients} client keys, taken in turn. */
	Run run(String url, int seconds, int clients) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of("wrk", "-t", Integer.toString(this.threads), "-c",
				Integer.toString(this.connections), "-d", seconds + "s", "--timeout", "5s", "-s", this.script.toString(),
				url, "--", Integer.toString(clients), "client-"));
		command.addAll(this.scriptArgs);
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		int exit = process.waitFor();
		for (String line : output.split("\n")) {
			if (line.startsWith("WRK_RESULT ")) {
				Map<String, Double> fields = new HashMap<>();
				for (String pair : line.substring("WRK_RESULT ".length()).trim().split(" ")) {
					String[] parts = pair.split("=", 2);
					fields.put(parts[0], Double.parseDouble(parts[1]));
				}
				long socketErrors = (long) (fields.get("connect_errors") + fields.get("read_errors")
						+ fields.get("write_errors") + fields.get("timeouts"));
				return new Run(fields.get("requests").longValue(), fields.get("duration_us") / 1e6,
						fields.get("p50_us") / 1000, fields.get("p99_us") / 1000, fields.get("status_errors").longValue(),
						socketErrors);
			}
		}
		throw new IllegalStateException("wrk exited " + exit + " without a result:\n" + output);
	}

}
