package io.windowlimiter.app.it;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

/**
 * Keep-alive clients, each on its own connection with its own key, sending one request after another, a
 * pause apart, until stopped: at most as many requests in flight as clients. The clients start spread over
 * one pause, as independent clients do, rather than all in the same millisecond. Every answer's latency is kept; a request without an answer
 * within the bound is counted and its client goes on on a new connection.
 */
final class SteadyLoad implements AutoCloseable {

	private final Tally tally = new Tally();

	private final List<long[]> latencies = new ArrayList<>();

	/** How long each unanswered request had waited when given up on: it counts in the latencies too. */
	private final List<Long> givenUp = new ArrayList<>();

	/** When each unanswered request was sent ({@link System#nanoTime()}), to place it against a fault. */
	private final List<Long> unansweredSentAt = new ArrayList<>();

	/** When each answer slower than a second ({@link RedisFaultJarIT#ANSWER_WITHIN}) was sent, to place it against a fault. */
	private final List<Long> slowSentAt = new ArrayList<>();

	private final ExecutorService pool;

	private final List<Future<?>> clients = new ArrayList<>();

	private volatile boolean running = true;

	private static final long SLOW_NANOS = 1_000_000_000L;

	private SteadyLoad(int clients) {
		this.pool = Executors.newFixedThreadPool(clients);
	}

	/** Clients sending back to back: as many requests in flight as clients, all the time. */
	static SteadyLoad start(GatewayJar gateway, String pathPrefix, int clients, Duration bound) {
		return start(gateway, pathPrefix, clients, Duration.ZERO, bound);
	}

	/**
	 * @param pause between an answer and the client's next request
	 */
	static SteadyLoad start(GatewayJar gateway, String pathPrefix, int clients, Duration pause, Duration bound) {
		SteadyLoad load = new SteadyLoad(clients);
		String run = Long.toString(System.nanoTime(), 36);
		for (int i = 0; i < clients; i++) {
			String key = "steady-" + run + "-" + i;
			long startAfter = pause.toMillis() * i / clients;
			load.clients.add(load.pool.submit(() -> load.client(gateway, pathPrefix + key, key, startAfter,
					pause.toMillis(), bound)));
		}
		return load;
	}

	private Void client(GatewayJar gateway, String path, String key, long startAfter, long pause, Duration bound) {
		long[] mine = new long[1024];
		int count = 0;
		GatewayJar.sleep(startAfter);
		while (this.running) {
			try (KeepAliveConnection connection = KeepAliveConnection.open(gateway.port(), bound)) {
				while (this.running) {
					KeepAliveConnection.Answer answer = connection.get(path, key);
					this.tally.answered(answer.status());
					if (count == mine.length) {
						mine = Arrays.copyOf(mine, count * 2);
					}
					mine[count++] = answer.nanos();
					if (answer.nanos() > SLOW_NANOS) {
						synchronized (this.slowSentAt) {
							this.slowSentAt.add(System.nanoTime() - answer.nanos());
						}
					}
					if (pause > 0) {
						GatewayJar.sleep(pause);
					}
				}
			}
			catch (KeepAliveConnection.Unanswered ex) {
				this.tally.unanswered(key + ": " + ex.getMessage());
				synchronized (this.givenUp) {
					this.givenUp.add(ex.waitedNanos);
					this.unansweredSentAt.add(System.nanoTime() - ex.waitedNanos);
				}
			}
			catch (KeepAliveConnection.NotKeptAlive ex) {
				this.tally.notKeptAlive(key + ": " + ex.getMessage());
			}
			catch (IOException ex) {
				this.tally.problem(key + ": " + ex);
			}
		}
		synchronized (this.latencies) {
			this.latencies.add(Arrays.copyOf(mine, count));
		}
		return null;
	}

	/** Stops the clients (each after its current request) and returns what they got. */
	Result stop() {
		this.running = false;
		try {
			for (Future<?> client : this.clients) {
				client.get(30, TimeUnit.SECONDS);
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		long[] all;
		synchronized (this.latencies) {
			synchronized (this.givenUp) {
				all = LongStream
					.concat(this.latencies.stream().flatMapToLong(Arrays::stream),
							this.givenUp.stream().mapToLong(Long::longValue))
					.sorted()
					.toArray();
			}
		}
		List<Long> sentAt;
		synchronized (this.givenUp) {
			sentAt = List.copyOf(this.unansweredSentAt);
		}
		synchronized (this.slowSentAt) {
			return new Result(this.tally, all, sentAt, List.copyOf(this.slowSentAt));
		}
	}

	/** Lets the clients run for {@code millis} more, then stops them. */
	Result stopAfter(long millis) {
		try {
			GatewayJar.sleep(millis);
			return stop();
		}
		finally {
			close();
		}
	}

	@Override
	public void close() {
		this.running = false;
		this.pool.shutdownNow();
	}

	/** Answers and their latencies, sorted. */
	record Result(Tally tally, long[] sortedNanos, List<Long> unansweredSentAt, List<Long> slowSentAt) {

		/** When each answer slower than a second was sent, in ms from {@code originNanos}. */
		List<Long> slowSentMillisFrom(long originNanos) {
			return this.slowSentAt.stream().map(at -> (at - originNanos) / 1_000_000).sorted().toList();
		}

		/** When each unanswered request was sent, in ms from {@code originNanos} (a {@link System#nanoTime()}). */
		List<Long> unansweredSentMillisFrom(long originNanos) {
			return this.unansweredSentAt.stream().map(at -> (at - originNanos) / 1_000_000).sorted().toList();
		}

		long over(Duration limit) {
			return Arrays.stream(this.sortedNanos).filter(nanos -> nanos > limit.toNanos()).count();
		}

		Duration percentile(double p) {
			if (this.sortedNanos.length == 0) {
				return Duration.ZERO;
			}
			int index = (int) Math.min(this.sortedNanos.length - 1, Math.ceil(p / 100 * this.sortedNanos.length) - 1);
			return Duration.ofNanos(this.sortedNanos[Math.max(0, index)]);
		}

		Duration max() {
			return (this.sortedNanos.length == 0) ? Duration.ZERO
					: Duration.ofNanos(this.sortedNanos[this.sortedNanos.length - 1]);
		}

		String summary() {
			return this.sortedNanos.length + " answers: p50 " + percentile(50).toMillis() + " ms, p99 "
					+ percentile(99).toMillis() + " ms, p99.9 " + percentile(99.9).toMillis() + " ms, max "
					+ max().toMillis() + " ms; over 100 ms: " + over(Duration.ofMillis(100)) + ", over 1 s: "
					+ over(Duration.ofSeconds(1)) + "; " + this.tally;
		}

	}

}
