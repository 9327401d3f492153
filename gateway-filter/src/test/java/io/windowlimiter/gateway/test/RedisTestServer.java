package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * One real Redis server for the whole test JVM, never a mock and never a skip: a Testcontainers
 * container where Docker runs, else a {@code redis-server} found on PATH, else the binary that
 * embedded-redis bundles (both as a {@link RedisProcess}). Tests keep apart by key or call {@link #flushAll()}.
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
		// redis-server from PATH, else the binary bundled with embedded-redis
		RedisProcess process = RedisProcess.launch();
		return new RedisTestServer("127.0.0.1", process.port(), RedisProcess.binary());
	}

	private static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (Throwable ex) {
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
