package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * One real Redis server for the whole test JVM, never a mock and never a skip: a Testcontainers
 * container where Docker runs, else a {@code redis-server} found on PATH, else the binary that
 * embedded-redis bundles (both as a {@link RedisProcess}). Tests keep apart by key or call {@link #flushAll()}.
 * A program that needs a server of its own, to fill, flush and read {@code INFO} of (the accuracy run),
 * {@link #launch() launches} one and closes it.
 */
public final class RedisTestServer implements AutoCloseable {

	private static final Duration SHARED_TIMEOUT = Duration.ofSeconds(5);

	private static RedisTestServer instance;

	private final String host;

	private final int port;

	private final String kind;

	private final LettuceConnectionFactory connectionFactory;

	private final ReactiveStringRedisTemplate template;

	/** How long {@link #flushAll()}, {@link #flushScripts()} and {@link #info(String)} may take. */
	private final Duration timeout;

	/** The server of a {@link #launch()}, which {@link #close()} stops; null for the shared one. */
	private final RedisProcess own;

	private RedisTestServer(String host, int port, String kind, Duration timeout, RedisProcess own) {
		this.host = host;
		this.port = port;
		this.kind = kind;
		this.timeout = timeout;
		this.own = own;
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

	/**
	 * A {@code redis-server} process of the caller's own (never a container), with a client as
	 * {@link #get()}'s has; {@link #close()} stops both. Its commands here may take up to 30 s: a program
	 * fills it with a run's worth of keys.
	 */
	public static RedisTestServer launch() {
		RedisProcess process = RedisProcess.launch();
		return new RedisTestServer("127.0.0.1", process.port(), RedisProcess.binary(), Duration.ofSeconds(30), process);
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
		this.template.execute(connection -> connection.serverCommands().flushAll()).blockLast(this.timeout);
	}

	/** Empties Redis's script cache, so the next run of each script takes the NOSCRIPT path. */
	public void flushScripts() {
		this.template.execute(connection -> connection.scriptingCommands().scriptFlush())
			.blockLast(this.timeout);
	}

	/** One section of {@code INFO}, e.g. {@code memory} or {@code server}. */
	public Properties info(String section) {
		return this.template.execute(connection -> connection.serverCommands().info(section)).blockLast(this.timeout);
	}

	/** Closes the client and stops the server of a {@link #launch()}; the shared server lives as long as the JVM. */
	@Override
	public void close() {
		if (this.own == null) {
			throw new IllegalStateException("The shared test server lives as long as the JVM; only launch()'s close");
		}
		this.connectionFactory.destroy();
		this.own.close();
	}

	private static RedisTestServer start() {
		if (dockerAvailable()) {
			GenericContainer<?> container = new GenericContainer<>("redis:7.2-alpine").withExposedPorts(6379);
			container.start();
			return new RedisTestServer(container.getHost(), container.getMappedPort(6379), "Testcontainers", SHARED_TIMEOUT,
					null);
		}
		// redis-server from PATH, else the binary bundled with embedded-redis
		RedisProcess process = RedisProcess.launch();
		return new RedisTestServer("127.0.0.1", process.port(), RedisProcess.binary(), SHARED_TIMEOUT, null);
	}

	private static boolean dockerAvailable() {
		// Where no engine runs, Testcontainers logs an ERROR listing what it tried (a passing build printed
		// it): ask it only where a Docker endpoint may be.
		String home = System.getProperty("user.home", "");
		if (System.getenv("DOCKER_HOST") == null && !Files.exists(Path.of("/var/run/docker.sock"))
				&& !Files.exists(Path.of(home, ".docker", "run", "docker.sock"))
				&& !Files.exists(Path.of(home, ".testcontainers.properties"))) {
			return false;
		}
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (Throwable ex) {
			// also NoClassDefFoundError: testcontainers is optional (see test-support's pom)
			return false;
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

}
