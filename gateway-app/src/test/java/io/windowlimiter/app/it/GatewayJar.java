package io.windowlimiter.app.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.windowlimiter.gateway.test.RedisTestServer;

/**
 * The packaged gateway-app jar run as its own JVM with {@code java -jar}, the way users run it, with its
 * default settings: only the server port, the Redis address and a file of extra routes are given.
 * Never any limiter tuning (timeouts, breaker): these tests are about what the defaults do.
 */
final class GatewayJar implements AutoCloseable {

	// more with -Dit.start-within-seconds on a machine busy with other builds
	private static final Duration START_WITHIN = Duration.ofSeconds(Long.getLong("it.start-within-seconds", 90));

	/** For probes of the actuator endpoints and single requests, beside the clients under test. */
	private static final HttpClient PROBES = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

	private final String name;

	private final Process process;

	private final int port;

	private final Path log;

	private GatewayJar(String name, Process process, int port, Path log) {
		this.name = name;
		this.process = process;
		this.port = port;
		this.log = log;
	}

	/**
	 * Starts the jar and returns once its health endpoint says UP (so Redis answers it too).
	 * @param extraArgs more {@code --name=value} arguments, e.g. to expose an actuator endpoint
	 */
	static GatewayJar start(String name, int redisPort, Path routes, String... extraArgs) {
		return start(name, redisPort, routes, List.of(), extraArgs);
	}

	/**
	 * As {@link #start(String, int, Path, String...)}, with options for the JVM, e.g. {@code -Xmx512m}.
	 */
	static GatewayJar start(String name, int redisPort, Path routes, List<String> jvmOptions, String... extraArgs) {
		return start(name, ProcessHandle.current().info().command().orElse("java"), redisPort, routes, jvmOptions,
				extraArgs);
	}

	/**
	 * As {@link #start(String, int, Path, List, String...)}, on another JVM than the tests' own, e.g. a Java 21+
	 * one for virtual threads.
	 * @param java the {@code java} command
	 */
	static GatewayJar start(String name, String java, int redisPort, Path routes, List<String> jvmOptions,
			String... extraArgs) {
		return start(name, java, redisPort, routes, jvmOptions, Map.of(), extraArgs);
	}

	/**
	 * As {@link #start(String, int, Path, String...)}, with more variables in the JVM's environment, e.g.
	 * those every Kubernetes pod has ({@code KUBERNETES_SERVICE_HOST}), which Spring Boot reads.
	 */
	static GatewayJar start(String name, int redisPort, Path routes, Map<String, String> environment,
			String... extraArgs) {
		return start(name, ProcessHandle.current().info().command().orElse("java"), redisPort, routes, List.of(),
				environment, extraArgs);
	}

	private static GatewayJar start(String name, String java, int redisPort, Path routes, List<String> jvmOptions,
			Map<String, String> environment, String... extraArgs) {
		Path jar = jar();
		int port = RedisTestServer.freePort();
		Path log = logDir().resolve(name + "-" + port + ".log");
		List<String> command = new ArrayList<>();
		command.add(java);
		command.addAll(jvmOptions);
		command.addAll(List.of("-jar", jar.toString(), "--server.port=" + port, "--spring.data.redis.host=127.0.0.1",
				"--spring.data.redis.port=" + redisPort, "--spring.config.additional-location=file:" + routes));
		command.addAll(List.of(extraArgs));
		try {
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
			builder.environment().putAll(environment);
			Process process = builder.start();
			GatewayJar gateway = new GatewayJar(name, process, port, log);
			try {
				gateway.awaitHealthy();
			}
			catch (RuntimeException ex) {
				gateway.close();
				throw ex;
			}
			return gateway;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start " + command, ex);
		}
	}

	/**
	 * Runs the jar with a configuration it must refuse: waits for its JVM to exit, and returns its exit code
	 * and everything it printed. Fails if it is still running after {@code within} (it was not refused).
	 */
	static Exited startRefused(String name, int redisPort, Path routes, Duration within) {
		Path log = logDir().resolve(name + ".log");
		List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-jar",
				jar().toString(), "--server.port=" + RedisTestServer.freePort(), "--spring.data.redis.host=127.0.0.1",
				"--spring.data.redis.port=" + redisPort, "--spring.config.additional-location=file:" + routes));
		Process process = null;
		try {
			process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
			if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException(name + " still running after " + within + " (log " + log + ")");
			}
			return new Exited(process.exitValue(), Files.readString(log));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		finally {
			if (process != null && process.isAlive()) {
				process.destroyForcibly();
			}
		}
	}

	/** How a jar run by {@link #startRefused} ended. */
	record Exited(int code, String output) {

	}

	/** Starts several at once (each its own JVM), returning when all are healthy. */
	static List<GatewayJar> startAll(int redisPort, Path routes, String... names) {
		return startAll(redisPort, routes, List.of(), names);
	}

	/** As {@link #startAll(int, Path, String...)}, each with the same extra arguments. */
	static List<GatewayJar> startAll(int redisPort, Path routes, List<String> extraArgs, String... names) {
		String[] extra = extraArgs.toArray(String[]::new);
		List<CompletableFuture<GatewayJar>> starting = Stream.of(names)
			.map(name -> CompletableFuture.supplyAsync(() -> start(name, redisPort, routes, extra)))
			.toList();
		List<GatewayJar> started = new ArrayList<>();
		RuntimeException failure = null;
		for (CompletableFuture<GatewayJar> future : starting) {
			try {
				started.add(future.join());
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
		}
		if (failure != null) {
			started.forEach(GatewayJar::close);
			throw failure;
		}
		return started;
	}

	int port() {
		return this.port;
	}

	Path log() {
		return this.log;
	}

	long pid() {
		return this.process.pid();
	}

	/**
	 * The limiter's answers so far with any of these outcomes, all routes together, from its
	 * {@code gateway.ratelimit.decisions} counter on {@code /actuator/prometheus}.
	 * @param outcomes e.g. {@code allowed}, {@code denied}, {@code error}, {@code fallback}
	 */
	long decisions(String... outcomes) {
		String metrics = prometheus();
		long sum = 0;
		for (String outcome : outcomes) {
			sum += (long) sum(metrics, "gateway_ratelimit_decisions_total", "outcome=\"" + outcome + "\"");
		}
		return sum;
	}

	/** Answers the route's fail-mode gave because Redis did not decide (fail-mode open, closed or local). */
	long failModeAnswers() {
		return decisions("error", "fallback");
	}

	/** Answers Redis decided: allowed or denied by its word (the deny cache included). */
	long redisDecisions() {
		return decisions("allowed", "denied");
	}

	/**
	 * Settles of reservations that ended with this result so far, all routes together, from
	 * {@code gateway.ratelimit.settles}: {@code applied}, {@code unchanged}, {@code duplicate} or {@code dropped}.
	 */
	long settles(String result) {
		return (long) sum(prometheus(), "gateway_ratelimit_settles_total", "result=\"" + result + "\"");
	}

	/** The JVM's heap in use right after a full GC, forced with {@code jcmd <pid> GC.run}. */
	long heapUsedAfterGc() {
		Path jcmd = Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("jcmd");
		try {
			Process gc = new ProcessBuilder(jcmd.toString(), Long.toString(pid()), "GC.run").redirectErrorStream(true)
				.start();
			String output = new String(gc.getInputStream().readAllBytes());
			if (gc.waitFor() != 0) {
				throw new IllegalStateException("jcmd GC.run failed: " + output);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		return (long) sum(prometheus(), "jvm_memory_used_bytes", "area=\"heap\"");
	}

	/** GET {@code path} on the gateway with a fresh connection: its status, body, and how long it took. */
	Probe get(String path, Duration timeout) {
		long start = System.nanoTime();
		try {
			HttpResponse<String> response = PROBES.send(
					HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).timeout(timeout).build(),
					HttpResponse.BodyHandlers.ofString());
			return new Probe(response.statusCode(), response.body(), Duration.ofNanos(System.nanoTime() - start));
		}
		catch (IOException ex) {
			return new Probe(0, ex.toString(), Duration.ofNanos(System.nanoTime() - start));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** One answer of {@link #get}: status 0 when there was none within the timeout. */
	record Probe(int status, String body, Duration took) {

		@Override
		public String toString() {
			return this.status + " in " + this.took.toMillis() + " ms: "
					+ this.body.substring(0, Math.min(this.body.length(), 300));
		}

	}

	private String prometheus() {
		Probe probe = get("/actuator/prometheus", Duration.ofSeconds(5));
		if (probe.status() != 200) {
			throw new IllegalStateException("/actuator/prometheus of " + this + " answered " + probe);
		}
		return probe.body();
	}

	/** The sum of a metric's samples whose labels contain {@code label}, in Prometheus text format. */
	private static double sum(String metrics, String name, String label) {
		double sum = 0;
		for (String line : metrics.split("\n")) {
			if (line.startsWith(name + "{") && line.contains(label)) {
				sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
			}
		}
		return sum;
	}

	@Override
	public String toString() {
		return this.name + " on port " + this.port + " (log " + this.log + ")";
	}

	private void awaitHealthy() {
		HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
		URI health = URI.create("http://127.0.0.1:" + this.port + "/actuator/health");
		long deadline = System.nanoTime() + START_WITHIN.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException(this + " stopped while starting");
			}
			try {
				HttpResponse<String> response = client.send(
						HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(2)).build(),
						HttpResponse.BodyHandlers.ofString());
				if (response.statusCode() == 200 && response.body().contains("\"UP\"")) {
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			sleep(100);
		}
		throw new IllegalStateException(this + " was not healthy within " + START_WITHIN);
	}

	@Override
	public void close() {
		this.process.destroy();
		try {
			if (!this.process.waitFor(15, TimeUnit.SECONDS)) {
				this.process.destroyForcibly().waitFor();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** The jar failsafe names (after spring-boot:repackage), else the one in target/. */
	private static Path jar() {
		String property = System.getProperty("gateway.jar");
		Path jar = (property != null) ? Path.of(property) : findJar();
		if (!Files.isRegularFile(jar)) {
			throw new IllegalStateException("No gateway jar at " + jar + ": run these tests with mvn verify");
		}
		return jar;
	}

	private static Path findJar() {
		try (Stream<Path> files = Files.list(Path.of("target"))) {
			return files.filter(file -> file.getFileName().toString().matches("gateway-app-.*\\.jar"))
				.findFirst()
				.orElse(Path.of("target", "gateway-app.jar"));
		}
		catch (IOException ex) {
			return Path.of("target", "gateway-app.jar");
		}
	}

	private static Path logDir() {
		try {
			return Files.createDirectories(Path.of("target", "it-gateway-logs"));
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
