package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.LimitScript;
import reactor.core.publisher.Flux;

/**
 * Part 1: decisions per second through the library alone ({@link WindowRateLimiter#isAllowed}, the
 * call the gateway makes per request, no HTTP), with many decisions in flight over 10,000 client
 * keys, all allowed; then {@code redis-benchmark} running the very same script by SHA with the same
 * arguments and key shape on the same Redis, pipelined (-P 16) and not (-P 1). The ratio
 * library / pipelined says how close the library comes to what Redis itself can do.
 *
 * <p>A plain timed loop: a warm-up (JIT, connection, script cache, and every client's key created),
 * then a fixed measuring time. redis-benchmark gets the same: a short run that creates the keys and
 * finds the rate, then one of about the configured length. Library and redis-benchmark take turns
 * for a few rounds and each keeps its fastest.
 */
final class DecisionThroughputBenchmark {

	/** One row of the results. */
	record Result(Algorithm algorithm, double libraryPerSecond, double redisPipelined, double redisUnpipelined,
			long undecided) {

		double ratioToPipelined() {
			return this.libraryPerSecond / this.redisPipelined;
		}

	}

	private final LocalRedis redis;

	private final int keys;

	private final long limit;

	private final String window;

	/** Whether redis-benchmark also runs without pipelining. */
	private final boolean unpipelined;

	private final int inFlight = Settings.integer("decision.in-flight", 256);

	private final Duration warmUp = Duration.ofSeconds(Settings.integer("decision.warmup-seconds", 2));

	private final Duration measure = Duration.ofSeconds(Settings.integer("decision.seconds", 4));

	private final int redisBenchmarkSeconds = Settings.integer("decision.redis-benchmark-seconds", 3);

	private final int rounds = Settings.integer("decision.rounds", 2);

	/** Part 1: 10,000 clients, all allowed at the usual limit of 1,000 a minute, -P 1 too. */
	DecisionThroughputBenchmark(LocalRedis redis) {
		this(redis, Settings.integer("keys", 10_000), Settings.allowedLimit(), "1m", true);
	}

	/** Decisions over {@code keys} client keys with {@code limit} per {@code window} each, all allowed. */
	DecisionThroughputBenchmark(LocalRedis redis, int keys, long limit, String window, boolean unpipelined) {
		this.redis = redis;
		this.keys = keys;
		this.limit = limit;
		this.window = window;
		this.unpipelined = unpipelined;
	}

	String setup() {
		return String.format("`WindowRateLimiter.isAllowed` with %d decisions in flight over one Lettuce connection, "
				+ "%,d client keys, limit %,d per %s (all allowed), %d s after %d s warm-up; `redis-benchmark -c %d -r %d` "
				+ "running the same script by EVALSHA with the keys and arguments the library sends, for about %d s; "
				+ "%d rounds of both, the fastest of each kept%s",
				this.inFlight, this.keys, this.limit, this.window, this.measure.toSeconds(), this.warmUp.toSeconds(),
				RedisBenchmarkTool.CLIENTS, this.keys, this.redisBenchmarkSeconds, this.rounds,
				this.unpipelined ? " (-P 1: one round)" : "");
	}

	List<Result> run() throws IOException, InterruptedException {
		List<Result> results = new ArrayList<>();
		try (Library library = new Library(LocalRedis.HOST, this.redis.port());
				Library probe = new Library(LocalRedis.HOST, this.redis.port(), true)) {
			RedisBenchmarkTool redisBenchmark = new RedisBenchmarkTool(this.redis.port());
			jitWarmUp(library);
			for (Algorithm algorithm : Algorithm.rates()) {
				Result result = measure(library, probe, redisBenchmark, algorithm);
				System.out.printf("decision %-24s library %,10.0f/s  redis-benchmark -P16 %,10.0f/s  -P1 %,10.0f/s  "
						+ "ratio %.2f  (not decided %,d)%n", Algorithms.name(algorithm), result.libraryPerSecond(),
						result.redisPipelined(), result.redisUnpipelined(), result.ratioToPipelined(), result.undecided());
				results.add(result);
			}
		}
		this.redis.flushAll();
		return results;
	}

	/**
	 * One algorithm: rounds of the library then redis-benchmark -P 16, each keeping its fastest (other
	 * work on the machine only slows a run down); then -P 1 once, if asked (else NaN). {@code probe} is a
	 * recording library, for the command redis-benchmark sends.
	 */
	Result measure(Library library, Library probe, RedisBenchmarkTool redisBenchmark, Algorithm algorithm)
			throws IOException, InterruptedException {
		String routeId = "bench-" + Algorithms.name(algorithm);
		library.configureRoute(routeId, algorithm, this.limit, this.window);
		List<String> command = redisBenchmarkCommand(probe, routeId, algorithm);
		Timed measured = null;
		double pipelined = 0;
		long undecided = 0;
		for (int round = 0; round < this.rounds; round++) {
			this.redis.flushAll();
			timed(library.limiter(), routeId, this.warmUp);
			Timed run = timed(library.limiter(), routeId, this.measure);
			undecided += run.undecided();
			measured = (measured == null || run.perSecond() > measured.perSecond()) ? run : measured;
			pipelined = Math.max(pipelined, redisBenchmark(redisBenchmark, command, 16));
			checkAllowed(command);
		}
		double unpipelined = Double.NaN;
		if (this.unpipelined) {
			unpipelined = redisBenchmark(redisBenchmark, command, 1);
			checkAllowed(command);
		}
		this.redis.flushAll();
		return new Result(algorithm, measured.perSecond(), pipelined, unpipelined, undecided);
	}

	/** The first algorithm measured should not pay for compiling the code all share. */
	void jitWarmUp(Library library) {
		for (Algorithm algorithm : Algorithm.rates()) {
			String routeId = "jit-" + Algorithms.name(algorithm);
			library.configureRoute(routeId, algorithm, this.limit, this.window);
			timed(library.limiter(), routeId, Duration.ofSeconds(1));
		}
	}

	/** What a timed run did. */
	record Timed(long decisions, long undecided, double seconds) {

		double perSecond() {
			return this.decisions / this.seconds;
		}

	}

	private Timed timed(WindowRateLimiter limiter, String routeId, Duration duration) {
		return timed(limiter, routeId, duration, this.keys, this.inFlight);
	}

	/**
	 * Decisions of random clients among {@code keys}, {@code inFlight} at a time, for {@code duration};
	 * also the load of {@link PlanBenchmark}.
	 */
	static Timed timed(WindowRateLimiter limiter, String routeId, Duration duration, int keys, int inFlight) {
		AtomicLong undecided = new AtomicLong();
		long start = System.nanoTime();
		long deadline = start + duration.toNanos();
		Long answers = Flux.range(0, Integer.MAX_VALUE)
			.takeWhile(i -> System.nanoTime() < deadline)
			.flatMap(i -> limiter.isAllowed(routeId, clientKey(ThreadLocalRandom.current().nextInt(keys))), inFlight)
			.doOnNext(response -> {
				// Failing open (timeout, circuit open, Redis error) answers without headers
				if (!response.isAllowed() || response.getHeaders().isEmpty()) {
					undecided.incrementAndGet();
				}
			})
			.count()
			.block();
		double seconds = (System.nanoTime() - start) / 1e9;
		// Only real decisions count; a fail-open answer is cheap and would flatter the figure
		return new Timed(answers - undecided.get(), undecided.get(), seconds);
	}

	/**
	 * EVALSHA of the script the library runs, with exactly the keys and arguments it sends for one
	 * decision (recorded from a real one, so this follows whatever the library sends), the client part
	 * of each key replaced by redis-benchmark's {@code __rand_int__}: a 12-digit number, the same shape
	 * as {@link #clientKey}.
	 */
	private List<String> redisBenchmarkCommand(Library probe, String routeId, Algorithm algorithm) {
		probe.configureRoute(routeId, algorithm, this.limit, this.window);
		String client = clientKey(0);
		probe.limiter().isAllowed(routeId, client).block(Duration.ofSeconds(10));
		ScriptRecorder.ScriptCall call = probe.lastCall();
		String sha = this.redis.scriptLoad(probe.bean(LimitScript.class).script().getScriptAsString(), call.script());
		List<String> command = new ArrayList<>(List.of("EVALSHA", sha, Integer.toString(call.keys().size())));
		for (String key : call.keys()) {
			if (!key.contains(client) || !key.endsWith(algorithm.keySuffix())) {
				throw new IllegalStateException("Expected keys of the client's, the library sent " + call.keys());
			}
			command.add(key.replace(client, "__rand_int__"));
		}
		command.addAll(call.args());
		return command;
	}

	/** After redis-benchmark: its command still gives an allowed decision, neither an error nor a denial. */
	private void checkAllowed(List<String> command) {
		int keys = Integer.parseInt(command.get(2));
		String[] keyNames = command.subList(3, 3 + keys)
			.stream()
			.map(key -> key.replace("__rand_int__", clientKey(0)))
			.toArray(String[]::new);
		List<Object> reply = this.redis.evalsha(command.get(1), keyNames,
				command.subList(3 + keys, command.size()).toArray(String[]::new));
		if (!Long.valueOf(1L).equals(reply.get(0))) {
			throw new IllegalStateException("The script did not allow the benchmark's request: " + reply
					+ "; raise bench.limit");
		}
	}

	/** A short run that creates the keys and finds the rate, then one of about the configured length. */
	private double redisBenchmark(RedisBenchmarkTool tool, List<String> command, int pipeline)
			throws IOException, InterruptedException {
		this.redis.flushAll();
		long errors = this.redis.errorReplies();
		double estimate = tool.run(command, pipeline, 20_000, this.keys);
		long requests = Math.max(20_000, (long) (estimate * this.redisBenchmarkSeconds));
		double rate = tool.run(command, pipeline, requests, this.keys);
		// redis-benchmark counts error replies (NOSCRIPT, wrong arguments) as answers
		if (this.redis.errorReplies() > errors) {
			throw new IllegalStateException("redis-benchmark's command got " + (this.redis.errorReplies() - errors)
					+ " error replies: " + command);
		}
		return rate;
	}

	static String clientKey(int i) {
		return String.format("%012d", i);
	}

}
