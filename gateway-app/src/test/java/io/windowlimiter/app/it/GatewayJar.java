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

	private static final Duration START_WITHIN = Duration.ofSeconds(90);

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

	/** Starts the jar and returns once its health endpoint says UP (so Redis answers it too). */
	static GatewayJar start(String name, int redisPort, Path routes) {
		Path jar = jar();
		int port = RedisTestServer.freePort();
		Path log = logDir().resolve(name + "-" + port + ".log");
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.addAll(List.of("-jar", jar.toString(), "--server.port=" + port, "--spring.data.redis.host=127.0.0.1",
				"--spring.data.redis.port=" + redisPort, "--spring.config.additional-location=file:" + routes));
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
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

	/** Starts several at once (each its own JVM), returning when all are healthy. */
	static List<GatewayJar> startAll(int redisPort, Path routes, String... names) {
		List<CompletableFuture<GatewayJar>> starting = Stream.of(names)
			.map(name -> CompletableFuture.supplyAsync(() -> start(name, redisPort, routes)))
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

	/**
	 * Whether the limiter has logged a failed decision, i.e. given a fail-mode answer. It logs the first
	 * failure at once (later ones at most every 10 s), so one is enough to show.
	 */
	boolean gaveFailModeAnswers() {
		try {
			return Files.readString(this.log).contains("rate-limit decision(s) failed");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
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
