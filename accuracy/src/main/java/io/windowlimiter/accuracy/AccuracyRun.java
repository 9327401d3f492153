package io.windowlimiter.accuracy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.gateway.test.RedisTestServer;

/**
 * The accuracy run: replays every trace through every algorithm's script on a private Redis, scores
 * each against the exact log, measures memory and speed, and writes {@code results.md},
 * {@code results.csv} and the SVG pictures to the directory given as the only argument.
 *
 * <p>Run it with {@value #COMMAND} from the project root. It exits with an error when a cross-check
 * fails (the sliding log script against the Java exact log, every script against its rule in Java).
 */
public final class AccuracyRun {

	static final String COMMAND = "mvn -q -B install -DskipTests && mvn -q -B -pl accuracy exec:java";

	/** Clients and windows of each point of the charts: 288 client-minutes. */
	private static final int CLIENTS = 24;

	private static final int WINDOWS = 12;

	private static final double[] LEVELS = { 0.25, 0.5, 0.75, 1, 1.5, 2, 3 };

	private static final double[] DUTIES = { 0.5, 0.25, 0.1, 0.05 };

	/** The share of time bursty clients send in, in the overshoot picture and the tables. */
	private static final double BURST_DUTY = 0.25;

	private static final int CLIENTS_IN_FLIGHT = 64;

	private static final int MEMORY_CLIENTS = 500;

	private static final int SPEED_CLIENTS = 200;

	private static final int SPEED_ROUNDS = 5;

	private AccuracyRun() {
	}

	public static void main(String[] args) {
		Path out = Path.of(args.length > 0 ? args[0] : "docs/accuracy").toAbsolutePath().normalize();
		long start = System.nanoTime();
		// A private redis-server of the run's own: it is flushed and its memory read, never anyone's data
		try (RedisTestServer redis = RedisTestServer.launch()) {
			List<Algorithm> algorithms = Algorithm.rates();
			ScriptReplay replay = new ScriptReplay(new LimitScript(redis.template()), CLIENTS_IN_FLIGHT);

			List<Trace> steady = new ArrayList<>();
			List<Trace> bursts = new ArrayList<>();
			List<Trace> periodic = new ArrayList<>();
			for (double level : LEVELS) {
				steady.add(Traces.steady(level, CLIENTS, WINDOWS, seed(1, level)));
				bursts.add(Traces.onOff(level, BURST_DUTY, CLIENTS, WINDOWS, seed(2, level)));
				periodic.add(Traces.periodic(level, BURST_DUTY, CLIENTS, WINDOWS, seed(3, level)));
			}
			int atLimit = indexOf(LEVELS, 1);
			List<Trace> uneven = new ArrayList<>(List.of(steady.get(atLimit)));
			List<String> shares = new ArrayList<>(List.of("100%"));
			for (double duty : DUTIES) {
				uneven.add((duty == BURST_DUTY) ? periodic.get(atLimit) : Traces.periodic(1, duty, CLIENTS, WINDOWS, seed(4, duty)));
				shares.add(Plot.number(duty * 100) + "%");
			}
			Trace windowEdge = Traces.windowEdge();
			Trace edgeThenSteady = Traces.edgeThenSteady();
			Trace manyClients = Traces.manyClients(2000, 10, 5);

			// Each trace once, the ones the README's table quotes first.
			Map<String, Trace> traces = new LinkedHashMap<>();
			for (Trace trace : List.of(windowEdge, edgeThenSteady, steady.get(indexOf(LEVELS, 0.5)), steady.get(atLimit),
					steady.get(indexOf(LEVELS, 2)), bursts.get(atLimit), periodic.get(atLimit), manyClients)) {
				traces.put(trace.name(), trace);
			}
			for (List<Trace> family : List.of(steady, bursts, periodic, uneven)) {
				family.forEach(trace -> traces.putIfAbsent(trace.name(), trace));
			}

			Results results = new Results();
			for (Trace trace : traces.values()) {
				long traceStart = System.nanoTime();
				redis.flushAll();
				for (Algorithm algorithm : algorithms) {
					List<ScriptReplay.Answers> answers = replay.replay(trace, algorithm);
					results.add(trace.name(), algorithm, answers, Scoring.score(trace, algorithm, answers));
				}
				System.out.printf(Locale.ROOT, "%-22s %,9d requests x %d algorithms in %5.1f s%n", trace.name(),
						trace.requests(), algorithms.size(), (System.nanoTime() - traceStart) / 1e9);
			}

			Trace speedTrace = Footprint.speedTrace(SPEED_CLIENTS);
			Trace memoryTrace = Footprint.memoryTrace(MEMORY_CLIENTS);
			List<Footprint.Cost> costs = new Footprint(redis, replay).measure(algorithms, speedTrace, SPEED_ROUNDS,
					memoryTrace);
			costs.forEach(cost -> System.out.printf(Locale.ROOT, "%-28s %,7.0f bytes per client, %,7.0f decisions/s%n",
					Algorithms.name(cost.algorithm()), cost.bytesPerClient(), cost.decisionsPerSecond()));

			long seconds = Math.round((System.nanoTime() - start) / 1e9);
			List<Trace> ordered = new ArrayList<>(traces.values());
			RunInfo info = RunInfo.of(redis);
			String summary = Summary.table(results, windowEdge, edgeThenSteady, List.of(steady, bursts, periodic),
					List.of(steady.get(indexOf(LEVELS, 0.5)), steady.get(atLimit), bursts.get(atLimit), periodic.get(atLimit),
							manyClients),
					costs, info);
			write(out.resolve("results.md"), Report.markdown(info, COMMAND, ordered, results, costs, speedTrace,
					SPEED_ROUNDS, memoryTrace, seconds, summary));
			write(out.resolve("results.csv"), Report.csv(ordered, results));
			write(out.resolve("window-edge.svg"), Charts.timeline(windowEdge,
					"100 requests at second 59, 100 at second 61, limit 100 per minute", 50, 130, results));
			write(out.resolve("edge-then-steady.svg"), Charts.timeline(edgeThenSteady,
					"100 requests at second 59.9, then 10 per second for a minute, limit 100 per minute", 50, 130, results));
			String share = Plot.number(BURST_DUTY * 100) + "% of the time";
			write(out.resolve("overshoot.svg"), Charts.overshoot(List.of(steady, bursts, periodic),
					List.of("steady random arrivals", "on/off bursts at random, on " + share,
							"same " + Plot.number(BURST_DUTY * 100) + "% of every minute"),
					results));
			write(out.resolve("unevenness.svg"), Charts.unevenness(uneven, shares, results));
			System.out.println("Wrote " + out + " in " + seconds + " s");
			check(results);
		}
	}

	/** Fails the run when the scripts and their Java rules disagree anywhere: then no figure can be trusted. */
	private static void check(Results results) {
		for (Score score : results.all()) {
			boolean logDiffers = Algorithms.exact(score.algorithm()) && score.wronglyAllowed() + score.wronglyDenied() > 0;
			if (logDiffers || score.modelMismatches() > 0) {
				throw new IllegalStateException("Cross-check failed: " + score);
			}
		}
	}

	/** A seed per trace family and parameter, so adding a trace never changes another one. */
	private static long seed(int family, double parameter) {
		return family * 1_000_000L + Math.round(parameter * 1000);
	}

	private static int indexOf(double[] values, double value) {
		for (int i = 0; i < values.length; i++) {
			if (values[i] == value) {
				return i;
			}
		}
		throw new IllegalArgumentException(value + " is not among the levels");
	}

	private static void write(Path file, String text) {
		try {
			Files.createDirectories(file.getParent());
			Files.writeString(file, text, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
