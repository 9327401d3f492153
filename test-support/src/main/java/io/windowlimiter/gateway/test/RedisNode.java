package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code redis-server} process of a cluster or Sentinel set-up started by the tests, on a free
 * loopback port with a directory of its own (cluster nodes and Sentinels rewrite their files there).
 * The binary is {@code redis-server} from PATH, else the one embedded-redis bundles, so these
 * topologies run wherever the standalone tests do. Killed at JVM exit.
 */
public final class RedisNode implements AutoCloseable {

	private final int port;

	private final Path dir;

	private final Process process;

	private RedisNode(int port, Path dir, Process process) {
		this.port = port;
		this.dir = dir;
		this.process = process;
	}

	/** A server started with extra arguments, e.g. {@code --cluster-enabled yes}. */
	public static RedisNode server(String name, String... args) {
		int port = RedisTestServer.freePort();
		Path dir = tempDir(name, port);
		return start(port, dir, ServerProcesses.serverCommand(port, dir, List.of(args)));
	}

	/** A Sentinel with the given configuration lines, in a file of its own that it may rewrite. */
	public static RedisNode sentinel(String name, List<String> configLines) {
		int port = RedisTestServer.freePort();
		Path dir = tempDir(name, port);
		List<String> lines = new ArrayList<>(List.of("port " + port, "bind 127.0.0.1", "dir " + dir));
		lines.addAll(configLines);
		Path config = dir.resolve("sentinel.conf");
		try {
			Files.write(config, lines);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		return start(port, dir, List.of(RedisProcess.binary(), config.toString(), "--sentinel"));
	}

	public int port() {
		return this.port;
	}

	/** {@code 127.0.0.1:<port>}. */
	public String address() {
		return "127.0.0.1:" + this.port;
	}

	/** SIGSTOP: the node hangs, its connections stay open and unanswered. */
	public void freeze() {
		signal("-STOP");
	}

	/** SIGCONT: a frozen node resumes. */
	public void thaw() {
		signal("-CONT");
	}

	private void signal(String signal) {
		try {
			if (new ProcessBuilder("kill", signal, Long.toString(this.process.pid())).start().waitFor() != 0) {
				throw new IllegalStateException("kill " + signal + " failed on " + this);
			}
		}
		catch (java.io.IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	public boolean isAlive() {
		return this.process.isAlive();
	}

	/** SIGKILL: the server dies as in a crash, without a word to its clients, replicas or cluster. */
	public void kill() {
		this.process.destroyForcibly();
		try {
			this.process.waitFor();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		kill();
	}

	@Override
	public String toString() {
		return address() + " (log: " + this.dir.resolve("redis.log") + ")";
	}

	private static RedisNode start(int port, Path dir, List<String> command) {
		RedisNode node = new RedisNode(port, dir, ServerProcesses.start(command, dir.resolve("redis.log")));
		ServerProcesses.awaitPort(port, node.process, node);
		return node;
	}

	/** Waits a little while polling a server's state; never used to line up windows. */
	public static void pause(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static Path tempDir(String name, int port) {
		return ServerProcesses.tempDir("redis-" + name + "-" + port + "-");
	}

}
