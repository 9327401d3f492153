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
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.windowlimiter.gateway.test.RedisTestServer;

/**
 * gateway-app's jar run as its own JVM, the way users run a gateway: on a free loopback port, with
 * the external Redis (so no embedded one) and the benchmark's routes added by config file.
 */
final class GatewayProcess implements AutoCloseable {

	private final Process process;

	private final int port;

	private final Path log;

	/** RedisGuard's report line: "<n> rate-limit decision(s) failed since the last report". */
	private static final Pattern FAILED_DECISIONS = Pattern.compile("(\\d+) rate-limit decision\\(s\\) failed");

	private int logLinesRead;

	private GatewayProcess(Process process, int port, Path log) {
		this.process = process;
		this.port = port;
		this.log = log;
	}

	static GatewayProcess start(Path jar, int redisPort, String downstream, Path routes, Path log)
			throws IOException, InterruptedException {
		return start(jar, redisPort, downstream, routes, log, "/none/ready");
	}

	/** As above, ready once {@code readyPath} (a route without a limiter) answers 200. */
	static GatewayProcess start(Path jar, int redisPort, String downstream, Path routes, Path log, String readyPath)
			throws IOException, InterruptedException {
		return start(jar, redisPort, downstream, routes, log, readyPath, List.of());
	}

	/** As above, with {@code extraArgs} after the others, e.g. {@code --spring.data.redis.cluster.nodes=...}. */
	static GatewayProcess start(Path jar, int redisPort, String downstream, Path routes, Path log, String readyPath,
			List<String> extraArgs) throws IOException, InterruptedException {
		if (!Files.isRegularFile(jar)) {
			throw new IllegalStateException("No gateway jar at " + jar + ": build it with mvn -q -B install -DskipTests");
		}
		int port = RedisTestServer.freePort();
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.addAll(Arrays.asList(jvmOptions().split("\\s+")));
		command.addAll(List.of("-jar", jar.toString(), "--server.port=" + port,
				"--spring.data.redis.host=" + LocalRedis.HOST, "--spring.data.redis.port=" + redisPort,
				"--spring.config.additional-location=file:" + routes, "--bench.downstream=" + downstream,
				// so that failed decisions (which fail open: fast, and 200) show in the log case by case
				"--window-rate-limiter.failure-log-interval=500ms"));
		if (!Settings.redisTimeout().isEmpty()) {
			command.add("--window-rate-limiter.redis-timeout=" + Settings.redisTimeout());
		}
		command.addAll(extraArgs);
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		GatewayProcess gateway = new GatewayProcess(process, port, log);
		try {
			gateway.awaitReady(readyPath);
		}
		catch (RuntimeException | InterruptedException ex) {
			// no caller holds it yet to close: a gateway that never got ready would outlive the benchmark
			process.destroyForcibly();
			throw ex;
		}
		return gateway;
	}

	int port() {
		return this.port;
	}

	/** The gateway JVM's options ({@code BENCH_GATEWAY_JVM_OPTIONS}), for the command and the reports. */
	static String jvmOptions() {
		return Settings.string("gateway.jvm-options", "-Xms512m -Xmx512m");
	}

	long pid() {
		return this.process.pid();
	}

	/** The gateway JVM's CPU time so far (user and system, from /proc). */
	Duration cpu() {
		return this.process.info().totalCpuDuration().orElseThrow();
	}

	String url(String path) {
		return "http://" + LocalRedis.HOST + ":" + this.port + path;
	}

	/**
	 * Decisions that failed (timeout, open circuit, Redis error) as the limiter logged them since the
	 * last call. They fail open, so wrk sees a fast 200: a case with failures measured no limiter.
	 */
	long failedDecisionsSinceLastCall() throws IOException {
		List<String> lines = Files.readAllLines(this.log);
		long failed = 0;
		for (String line : lines.subList(Math.min(this.logLinesRead, lines.size()), lines.size())) {
			Matcher matcher = FAILED_DECISIONS.matcher(line);
			if (matcher.find()) {
				failed += Long.parseLong(matcher.group(1));
			}
		}
		this.logLinesRead = lines.size();
		return failed;
	}

	private void awaitReady(String readyPath) throws InterruptedException {
		HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
		long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("The gateway stopped while starting; see " + this.log);
			}
			try {
				HttpResponse<Void> response = client.send(HttpRequest.newBuilder(URI.create(url(readyPath))).build(),
						HttpResponse.BodyHandlers.discarding());
				if (response.statusCode() == 200) {
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			Thread.sleep(250);
		}
		throw new IllegalStateException("The gateway did not answer within 120 s; see " + this.log);
	}

	@Override
	public void close() throws InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(Duration.ofSeconds(15).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
			this.process.destroyForcibly().waitFor();
		}
	}

}
