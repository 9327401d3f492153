package io.windowlimiter.accuracy;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * A private {@code redis-server} (from PATH) on a free loopback port, for the accuracy run only. The
 * run flushes it and reads its memory use, so it never touches a Redis that holds anyone's data.
 */
public final class LocalRedis implements AutoCloseable {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final Process process;

	private final LettuceConnectionFactory connectionFactory;

	private final ReactiveStringRedisTemplate template;

	private LocalRedis(Process process, int port) {
		this.process = process;
		this.connectionFactory = new LettuceConnectionFactory("127.0.0.1", port);
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.template = new ReactiveStringRedisTemplate(this.connectionFactory);
	}

	/** Starts {@code redis-server} from PATH; fails with what to install when there is none. */
	public static LocalRedis start() {
		String binary = onPath("redis-server");
		if (binary == null) {
			throw new IllegalStateException("The accuracy run needs redis-server on PATH (Debian: apt-get install redis-server)");
		}
		int port = freePort();
		try {
			Path dir = Files.createTempDirectory("accuracy-redis");
			Process process = new ProcessBuilder(List.of(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
					"--save", "", "--appendonly", "no", "--dir", dir.toString()))
				.redirectErrorStream(true)
				.redirectOutput(dir.resolve("redis.log").toFile())
				.start();
			// Also when the run is interrupted (Ctrl-C): never leave a server behind.
			Runtime.getRuntime().addShutdownHook(new Thread(process::destroy));
			awaitPort(port);
			return new LocalRedis(process, port);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start " + binary, ex);
		}
	}

	public ReactiveStringRedisTemplate template() {
		return this.template;
	}

	public void flushAll() {
		this.template.execute(connection -> connection.serverCommands().flushAll()).blockLast(TIMEOUT);
	}

	/** One section of {@code INFO}, e.g. {@code memory} or {@code server}. */
	public Properties info(String section) {
		return this.template.execute(connection -> connection.serverCommands().info(section)).blockLast(TIMEOUT);
	}

	@Override
	public void close() {
		this.connectionFactory.destroy();
		this.process.destroy();
	}

	private static String onPath(String name) {
		String path = System.getenv("PATH");
		if (path != null) {
			for (String dir : path.split(File.pathSeparator)) {
				Path candidate = Path.of(dir, name);
				if (Files.isExecutable(candidate)) {
					return candidate.toString();
				}
			}
		}
		return null;
	}

	private static int freePort() {
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
				try {
					// waiting for a process to listen, not lining up a window
					Thread.sleep(20);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(interrupted);
				}
			}
		}
		throw new IllegalStateException("redis-server did not listen on port " + port + " within 10 s");
	}

}
