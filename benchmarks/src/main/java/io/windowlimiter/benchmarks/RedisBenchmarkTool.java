package io.windowlimiter.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs Redis's own {@code redis-benchmark} on one command and reads its rate from the CSV it prints:
 * what the server can do for that command with a C client and no library in between.
 */
final class RedisBenchmarkTool {

	/** redis-benchmark's default number of connections. */
	static final int CLIENTS = 50;

	private final int port;

	RedisBenchmarkTool(int port) {
		this.port = port;
	}

	/**
	 * Requests per second for {@code command}, where {@code __rand_int__} in an argument becomes a
	 * 12-digit number below {@code keyspace}.
	 */
	double run(List<String> command, int pipeline, long requests, int keyspace) throws IOException, InterruptedException {
		List<String> line = new ArrayList<>(List.of("redis-benchmark", "-h", LocalRedis.HOST, "-p",
				Integer.toString(this.port), "-c", Integer.toString(CLIENTS), "-n", Long.toString(requests), "-r",
				Integer.toString(keyspace), "-P", Integer.toString(pipeline), "--csv"));
		line.addAll(command);
		Process process = new ProcessBuilder(line).redirectErrorStream(true).start();
		List<String> output = new ArrayList<>();
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			for (String text = reader.readLine(); text != null; text = reader.readLine()) {
				output.add(text);
			}
		}
		int exit = process.waitFor();
		for (String text : output) {
			// "<command>","<rps>","<avg ms>",...; the header line has "rps" there
			String[] fields = text.split("\",\"");
			if (fields.length > 2 && !fields[1].equals("rps")) {
				return Double.parseDouble(fields[1]);
			}
		}
		throw new IllegalStateException("redis-benchmark exited " + exit + " without a rate: " + output);
	}

}
