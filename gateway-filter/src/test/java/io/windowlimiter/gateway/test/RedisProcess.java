package io.windowlimiter.gateway.test;

import java.io.File;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import redis.embedded.core.ExecutableProvider;

/**
 * A real {@code redis-server} process of a test's own, on a free loopback port: {@code redis-server}
 * from PATH, else the binary embedded-redis bundles. Tests may kill it, restart it on the same port,
 * freeze it (SIGSTOP) and thaw it (SIGCONT). Killed at JVM exit.
 */
public final class RedisProcess implements AutoCloseable {

	private final int port;

	private final Path dir;

	private Process process;

	private RedisProcess(int port, Path dir) {
		this.port = port;
		this.dir = dir;
		Runtime.getRuntime().addShutdownHook(new Thread(this::close));
	}

	/** A new server on a free port, started and listening. */
	public static RedisProcess launch() {
		try {
			RedisProcess redis = new RedisProcess(RedisTestServer.freePort(), Files.createTempDirectory("redis-test"));
			redis.start();
			return redis;
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** The redis-server binary used: from PATH, else the one embedded-redis bundles. */
	public static String binary() {
		String path = System.getenv("PATH");
		if (path != null) {
			for (String dir : path.split(File.pathSeparator)) {
				Path candidate = Path.of(dir, "redis-server");
				if (Files.isExecutable(candidate)) {
					return candidate.toString();
				}
			}
		}
		try {
			return ExecutableProvider.newJarResourceProvider().get().getAbsolutePath();
		}
		catch (IOException ex) {
			throw new IllegalStateException("No redis-server on PATH and none bundled for this platform", ex);
		}
	}

	public int port() {
		return this.port;
	}

	/** Starts the server (again) on its port and waits until it listens. */
	public synchronized void start() {
		try {
			this.process = new ProcessBuilder(List.of(binary(), "--port", Integer.toString(this.port), "--bind",
					"127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.dir.toString()))
				.redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(this.dir.resolve("redis.log").toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start " + binary(), ex);
		}
		awaitPort();
	}

	/** SIGKILL: gone at once, as in a crash. */
	public synchronized void kill() {
		if (this.process != null) {
			this.process.destroyForcibly();
			try {
				this.process.waitFor();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** SIGSTOP: the server hangs, its connections stay open and unanswered. */
	public void freeze() {
		signal("-STOP");
	}

	/** SIGCONT: a frozen server resumes. */
	public void thaw() {
		signal("-CONT");
	}

	@Override
	public void close() {
		kill();
	}

	private void signal(String signal) {
		try {
			Process kill = new ProcessBuilder("kill", signal, Long.toString(this.process.pid())).start();
			if (kill.waitFor() != 0) {
				throw new IllegalStateException("kill " + signal + " failed");
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private void awaitPort() {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (System.nanoTime() < deadline) {
			try (Socket socket = new Socket("127.0.0.1", this.port)) {
				return;
			}
			catch (IOException ex) {
				try {
					Thread.sleep(20);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(interrupted);
				}
			}
		}
		throw new IllegalStateException("Redis did not listen on port " + this.port + " within 10 s");
	}

}
