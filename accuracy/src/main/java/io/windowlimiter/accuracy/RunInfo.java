package io.windowlimiter.accuracy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;

import io.windowlimiter.gateway.test.RedisTestServer;

/**
 * Where and when the figures were measured, written next to them.
 *
 * @param date the day of the run (UTC)
 * @param cpus processors the JVM sees
 * @param cpuModel the processor, from {@code /proc/cpuinfo} where there is one
 * @param os operating system and version
 * @param java the Java runtime's version
 * @param redis the Redis server's version
 * @param load the machine's load average over the last 1, 5 and 15 minutes when the run ended: speed
 * figures from a busy machine are worth less
 */
public record RunInfo(LocalDate date, int cpus, String cpuModel, String os, String java, String redis, String load) {

	public static RunInfo of(RedisTestServer redis) {
		return new RunInfo(LocalDate.now(ZoneOffset.UTC), Runtime.getRuntime().availableProcessors(), readCpuModel(),
				System.getProperty("os.name") + " " + System.getProperty("os.version"), System.getProperty("java.version"),
				redis.info("server").getProperty("redis_version"), loadAverage());
	}

	/** One line for reports: "2 CPUs (Intel Xeon), Linux 6.1, Java 17.0.15, Redis 7.0.15, load 0.5 0.4 0.3, 2026-03-02". */
	public String line() {
		return this.cpus + " CPUs (" + this.cpuModel + "), " + this.os + ", Java " + this.java + ", Redis " + this.redis
				+ ", load average " + this.load + ", " + this.date;
	}

	private static String loadAverage() {
		try {
			String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
			return fields[0] + " " + fields[1] + " " + fields[2];
		}
		catch (IOException | RuntimeException ex) {
			return "unknown";
		}
	}

	private static String readCpuModel() {
		try {
			for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
				if (line.startsWith("model name")) {
					return line.substring(line.indexOf(':') + 1).trim();
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// not Linux: the architecture is all we can say
		}
		return System.getProperty("os.arch");
	}

}
