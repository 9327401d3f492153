package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What {@link RedisProcess} and {@link RedisNode} share: a throwaway server's command line, starting a
 * process that dies with the JVM, and waiting until it listens. The directories made by
 * {@link #tempDir(String)} are deleted at JVM exit, once the processes are gone: a full test run
 * used to leave dozens of them behind.
 */
final class ServerProcesses {

	private static final Duration LISTEN_WITHIN = Duration.ofSeconds(10);

	private static final List<Process> processes = new ArrayList<>();

	private static final List<Path> dirs = new ArrayList<>();

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(ServerProcesses::cleanUp, "redis-test-clean-up"));
	}

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
			synchronized (processes) {
				processes.add(process);
			}
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

	/** A new directory under java.io.tmpdir, deleted at JVM exit. */
	static Path tempDir(String prefix) {
		try {
			Path dir = Files.createTempDirectory(prefix);
			synchronized (processes) {
				dirs.add(dir);
			}
			return dir;
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** At JVM exit: kill every server still running, then delete the directories they wrote in. */
	private static void cleanUp() {
		synchronized (processes) {
			processes.forEach(Process::destroyForcibly);
			for (Process process : processes) {
				try {
					process.waitFor(5, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
			}
			dirs.forEach(ServerProcesses::deleteQuietly);
		}
	}

	private static void deleteQuietly(Path dir) {
		try (Stream<Path> paths = Files.walk(dir)) {
			paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
		}
		catch (IOException | RuntimeException ex) {
			// a directory left in /tmp is no reason to fail a JVM's exit
		}
	}

}
