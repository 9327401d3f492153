package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The CPU each process of an HTTP run has used so far: the gateway's JVM and the downstream (nginx) from
 * {@code /proc}, Redis from {@code INFO cpu}, wrk as this JVM's reaped children. Two readings around a load give
 * each process's CPU per request, which on cores all processes share is what decides req/s.
 */
record ProcessCpu(Duration gateway, double redisSeconds, Duration downstream, long wrkTicks) {

	static ProcessCpu read(GatewayProcess gateway, LocalRedis redis, Downstream downstream) throws IOException {
		return new ProcessCpu(gateway.cpu(), redis.cpuSeconds(), downstream.cpu(), reapedChildrenTicks());
	}

	/** Microseconds per request of each process from this reading to {@code later}: gateway, Redis, downstream, wrk. */
	Map<String, Double> microsPerRequest(ProcessCpu later, double requests) {
		Map<String, Double> micros = new LinkedHashMap<>();
		micros.put("gateway", later.gateway.minus(this.gateway).toNanos() / 1e3 / requests);
		micros.put("Redis", (later.redisSeconds - this.redisSeconds) * 1e6 / requests);
		micros.put("downstream", later.downstream.minus(this.downstream).toNanos() / 1e3 / requests);
		// clock ticks of 1/100 s
		micros.put("wrk", (later.wrkTicks - this.wrkTicks) * 1e4 / requests);
		return micros;
	}

	/** CPU of this JVM's children that have ended (wrk runs), in clock ticks of 1/100 s, from /proc/self/stat. */
	private static long reapedChildrenTicks() throws IOException {
		String stat = Files.readString(Path.of("/proc/self/stat"));
		// Fields after the command's closing parenthesis, from the state (field 3): cutime and cstime are 16 and 17
		String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
		return Long.parseLong(fields[13]) + Long.parseLong(fields[14]);
	}

}
