package io.windowlimiter.gateway.test;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * One real Redis server for the whole test JVM, never a mock and never a skip: a Testcontainers
 * container where Docker runs, else a {@code redis-server} found on PATH, else the binary that
 * embedded-redis bundles. Tests keep apart by key or call {@link #flushAll()}.
 */
public final class RedisTestServer {

	private static RedisTestServer instance;

	private final String host;

	private final int port;

	private final String kind;

	private final LettuceConnectionFactory connectionFactory;

	private final ReactiveStringRedisTemplate template;

	private RedisTestServer(String host, int port, String kind) {
		this.host = host;
		this.port = port;
		this.kind = kind;
		this.connectionFactory = new LettuceConnectionFactory(host, port);
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.template = new ReactiveStringRedisTemplate(this.connectionFactory);
	}

	/** The shared server, started on first use. */
	public static synchronized RedisTestServer get() {
		if (instance == null) {
			instance = start();
			System.out.println("Tests use Redis at " + instance.host + ":" + instance.port + " (" + instance.kind + ")");
		}
		return instance;
	}

	public String host() {
		return this.host;
	}

	public int port() {
		return this.port;
	}

	/** A template on the shared server, for tests that talk to Redis directly. */
	public ReactiveStringRedisTemplate template() {
		return this.template;
	}

	public void flushAll() {
		this.template.execute(connection -> connection.serverCommands().flushAll()).blockLast(Duration.ofSeconds(5));
	}

	/** Empties Redis's script cache, so the next run of each script takes the NOSCRIPT path. */
	public void flushScripts() {
		this.template.execute(connection -> connection.scriptingCommands().scriptFlush())
			.blockLast(Duration.ofSeconds(5));
	}

	private static RedisTestServer start() {
		if (dockerAvailable()) {
			GenericContainer<?> container = new GenericContainer<>("redis:7.2-alpine").withExposedPorts(6379);
			container.start();
			return new RedisTestServer(container.getHost(), container.getMappedPort(6379), "Testcontainers");
		}
		String binary = findOnPath("redis-server");
		if (binary != null) {
			return startProcess(binary);
		}
		return startEmbedded();
	}

	private static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (Throwable ex) {
			return false;
		}
	}

	private static String findOnPath(String name) {
		String path = System.getenv("PATH");
		if (path == null) {
			return null;
		}
		for (String dir : path.split(File.pathSeparator)) {
			Path candidate = Path.of(dir, name);
			if (Files.isExecutable(candidate)) {
				return candidate.toString();
			}
		}
		return null;
	}

	private static RedisTestServer startProcess(String binary) {
		int port = freePort();
		try {
			Path dir = Files.createTempDirectory("redis-test");
			Process process = new ProcessBuilder(List.of(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
					"--save", "", "--appendonly", "no", "--dir", dir.toString()))
				.redirectErrorStream(true)
				.redirectOutput(dir.resolve("redis.log").toFile())
				.start();
			Runtime.getRuntime().addShutdownHook(new Thread(process::destroy));
			awaitPort(port);
			return new RedisTestServer("127.0.0.1", port, binary);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start " + binary, ex);
		}
	}

	private static RedisTestServer startEmbedded() {
		int port = freePort();
		try {
			RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1").build();
			server.start();
			Runtime.getRuntime().addShutdownHook(new Thread(() -> {
				try {
					server.stop();
				}
				catch (IOException ex) {
					// the JVM is exiting anyway
				}
			}));
			return new RedisTestServer("127.0.0.1", port, "embedded-redis");
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start embedded Redis", ex);
		}
	}

	/** A port that was free a moment ago. */
	public static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void awaitPort(int port) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (System.nanoTime() < deadline) {
			try (Socket socket = new Socket("127.0.0.1", port)) {
				return;
			}
			catch (IOException ex) {
				pause();
			}
		}
		throw new IllegalStateException("Redis did not listen on port " + port + " within 10 s");
	}

	private static void pause() {
		try {
			Thread.sleep(20);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
