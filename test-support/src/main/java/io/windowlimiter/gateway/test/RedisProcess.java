package io.windowlimiter.gateway.test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import redis.embedded.core.ExecutableProvider;

/**
 * A real {@code redis-server} process of a test's own, on a free loopback port: {@code redis-server}
 * from PATH, else the binary embedded-redis bundles. Tests may kill it, restart it on the same port,
 * freeze it (SIGSTOP) and thaw it (SIGCONT). Killed at JVM exit. Also the server of the accuracy run
 * and the benchmarks (through {@link RedisTestServer#launch()} and {@link #launch(Path, String...)}).
 */
public final class RedisProcess implements AutoCloseable {

	private final int port;

	private final Path dir;

	private final List<String> args;

	private Process process;

	private RedisProcess(int port, Path dir, List<String> args) {
		this.port = port;
		this.dir = dir;
		this.args = args;
	}

	/** A new server on a free port, started and listening. */
	public static RedisProcess launch() {
		return launch(ServerProcesses.tempDir("redis-test"));
	}

	/**
	 * A new server on a free port, started and listening, with extra arguments for {@code redis-server},
	 * e.g. {@code --enable-debug-command local}; its directory is deleted at JVM exit.
	 */
	public static RedisProcess launchWith(String... args) {
		return launch(ServerProcesses.tempDir("redis-test"), args);
	}

	/**
	 * A new server on a free port, started and listening, with its files and its log ({@code redis.log})
	 * in {@code dir} (the caller's: it is kept) and extra arguments for {@code redis-server}, e.g. {@code --enable-debug-command local}.
	 */
	public static RedisProcess launch(Path dir, String... args) {
		try {
			Files.createDirectories(dir);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		RedisProcess redis = new RedisProcess(RedisTestServer.freePort(), dir, List.of(args));
		redis.start();
		return redis;
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
		this.process = ServerProcesses.start(ServerProcesses.serverCommand(this.port, this.dir, this.args), log());
		ServerProcesses.awaitPort(this.port, this.process, this);
	}

	/** The server's output, appended to over restarts. */
	public Path log() {
		return this.dir.resolve("redis.log");
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

	/**
	 * A SIGSTOP made ready ahead: the process that sends it is started now and sends it when the returned task
	 * runs, so a test can read what the server did just before the freeze without the start of a process (tens
	 * of milliseconds on a loaded machine, hundreds of decisions) in between.
	 */
	public Runnable freezeWhenRun() {
		try {
			Process kill = new ProcessBuilder("sh", "-c", "read go && exec kill -STOP " + this.process.pid()).start();
			return () -> {
				try {
					kill.getOutputStream().write('\n');
					kill.getOutputStream().flush();
					if (kill.waitFor() != 0) {
						throw new IllegalStateException("kill -STOP failed");
					}
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			};
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
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

	@Override
	public String toString() {
		return "127.0.0.1:" + this.port + " (log: " + log() + ")";
	}

}
