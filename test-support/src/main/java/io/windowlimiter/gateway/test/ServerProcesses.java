package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link RedisProcess} and {@link RedisNode} share: a throwaway server's command line, starting a
 * process that dies with the JVM, and waiting until it listens.
 */
final class ServerProcesses {

	private static final Duration LISTEN_WITHIN = Duration.ofSeconds(10);

	private ServerProcesses() {
	}

	/** {@code redis-server} on loopback, nothing written to disk, files in {@code dir}; then {@code args}. */
	static List<String> serverCommand(int port, Path dir, List<String> args) {
		List<String> command = new ArrayList<>(List.of(RedisProcess.binary(), "--port", Integer.toString(port),
				"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString()));
		command.addAll(args);
		return command;
	}

	/** Starts the command, its output appended to {@code log}; killed at JVM exit if still running. */
	static Process start(List<String> command, Path log) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
				.start();
			Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
			return process;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start " + command, ex);
		}
	}

	/** Waits until the process listens on the port; fails if it exits first or takes over 10 s. */
	static void awaitPort(int port, Process process, Object server) {
		long deadline = System.nanoTime() + LISTEN_WITHIN.toNanos();
		while (System.nanoTime() < deadline) {
			if (!process.isAlive()) {
				throw new IllegalStateException("redis-server " + server + " exited at start-up");
			}
			try (Socket socket = new Socket("127.0.0.1", port)) {
				return;
			}
			catch (IOException ex) {
				RedisNode.pause(Duration.ofMillis(20));
			}
		}
		throw new IllegalStateException("redis-server " + server + " did not listen within 10 s");
	}

	static Path tempDir(String prefix) {
		try {
			return Files.createTempDirectory(prefix);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
