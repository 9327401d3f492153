package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;

/**
 * What a result is worth without: the machine, the date and the code that ran, gathered from the
 * same commands a person would type ({@code nproc}, {@code lscpu}, {@code git}).
 */
record Machine(String cores, String cpu, String memory, String os, String java, String redis, String wrk,
		String commit, ZonedDateTime date, String loadAtStart) {

	static Machine describe(Path root, String redisVersion) {
		String cores = command(root, "nproc");
		String cpu = field(command(root, "lscpu"), "Model name:");
		String memory = field(command(root, "free", "-g"), "Mem:").trim().split("\\s+")[0] + " GB";
		String os = command(root, "uname", "-sr");
		String java = System.getProperty("java.vm.name") + " " + System.getProperty("java.version");
		String wrk = command(root, "wrk", "--version").lines().findFirst().orElse("?").replaceAll("Copyright.*", "").trim();
		String commit = command(root, "git", "rev-parse", "--short", "HEAD");
		String given = Settings.string("code", "");
		if (!given.isEmpty()) {
			return new Machine(cores, cpu, memory, os, java, "Redis " + redisVersion, wrk, given,
					ZonedDateTime.now(ZoneOffset.UTC), loadAverage());
		}
		String[] code = { "lua", "rate-limiter-core/src/main", "gateway-filter/src/main", "gateway-app/src/main" };
		String changed = (command(root, concat(new String[] { "git", "diff", "--name-only", "HEAD", "--" }, code)) + "\n"
				+ command(root, concat(new String[] { "git", "ls-files", "--others", "--exclude-standard", "--" }, code)))
			.trim();
		if (!changed.isEmpty()) {
			commit += " with uncommitted changes in " + String.join(", ", changed.lines().toList());
		}
		return new Machine(cores, cpu, memory, os, java, "Redis " + redisVersion, wrk, commit,
				ZonedDateTime.now(ZoneOffset.UTC), loadAverage());
	}

	String dateText() {
		return this.date.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
	}

	String fileStamp() {
		return this.date.format(DateTimeFormatter.ofPattern("yyyy-MM-dd-HHmm"));
	}

	/** The 1, 5 and 15 minute load averages: other work on the machine shares its cores. */
	static String loadAverage() {
		try {
			String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
			return fields[0] + ", " + fields[1] + ", " + fields[2];
		}
		catch (IOException ex) {
			return "?";
		}
	}

	private static String[] concat(String[] first, String[] second) {
		String[] all = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, all, first.length, second.length);
		return all;
	}

	private static String field(String text, String name) {
		return text.lines()
			.filter(line -> line.trim().startsWith(name))
			.map(line -> line.trim().substring(name.length()).trim())
			.findFirst()
			.orElse("?");
	}

	private static String command(Path root, String... command) {
		try {
			Process process = new ProcessBuilder(command).directory(root.toFile()).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
			process.waitFor();
			return output;
		}
		catch (IOException ex) {
			return "?";
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "?";
		}
	}

}
