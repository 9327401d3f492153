package io.windowlimiter.app.it;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A burst of requests as a fresh gateway meets it: {@code connections} keep-alive connections, each with a client
 * key of its own and one of the paths in turn, sending back to back until {@code requests} have been sent in all; every answer's latency is
 * kept. An action may run once a number of answers have come (a fault under load).
 */
final class Burst {

	private Burst() {
	}

	/**
	 * @param afterAnswers run {@code action} once this many answers have come; negative for never
	 * @param action what to do then (kill Redis), on the client thread that got that answer
	 */
	static Result fire(GatewayJar gateway, List<String> pathPrefixes, int requests, int connections, Duration bound,
			int afterAnswers, Runnable action) {
		Tally tally = new Tally();
		AtomicInteger left = new AtomicInteger(requests);
		AtomicInteger answered = new AtomicInteger();
		AtomicBoolean acted = new AtomicBoolean(afterAnswers < 0);
		long[] latencies = new long[requests];
		long[] sentAt = new long[requests];
		String[] pathOf = new String[requests];
		long began = System.nanoTime();
		AtomicInteger recorded = new AtomicInteger();
		String run = Long.toString(System.nanoTime(), 36);
		ExecutorService pool = Executors.newFixedThreadPool(connections);
		try {
			List<Future<?>> sending = new ArrayList<>();
			for (int i = 0; i < connections; i++) {
				String key = "burst-" + run + "-" + i;
				String pathPrefix = pathPrefixes.get(i % pathPrefixes.size());
				sending.add(pool.submit(() -> {
					try (KeepAliveConnection connection = KeepAliveConnection.open(gateway.port(), bound)) {
						while (left.getAndDecrement() > 0) {
							KeepAliveConnection.Answer answer = connection.get(pathPrefix + key, key);
							int index = recorded.getAndIncrement();
							latencies[index] = answer.nanos();
							sentAt[index] = System.nanoTime() - answer.nanos() - began;
							pathOf[index] = pathPrefix;
							tally.answered(answer.status());
							if (answered.incrementAndGet() >= afterAnswers && acted.compareAndSet(false, true)) {
								action.run();
							}
						}
					}
					catch (KeepAliveConnection.Unanswered ex) {
						tally.unanswered(key + ": " + ex.getMessage());
					}
					catch (KeepAliveConnection.NotKeptAlive ex) {
						tally.notKeptAlive(key + ": " + ex.getMessage());
					}
					catch (IOException ex) {
						tally.problem(key + ": " + ex);
					}
					return null;
				}));
			}
			for (Future<?> connection : sending) {
				connection.get();
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			pool.shutdownNow();
		}
		int count = recorded.get();
		long[] sorted = Arrays.copyOf(latencies, count);
		Arrays.sort(sorted);
		// the slowest answer of each path, and the slowest answers with when they were sent, in ms from the burst's
		// start, to place them
		java.util.Map<String, Long> slowestByPath = new java.util.TreeMap<>();
		for (int i = 0; i < count; i++) {
			slowestByPath.merge(pathOf[i], latencies[i] / 1_000_000, Math::max);
		}
		List<String> slowest = new ArrayList<>();
		slowest.add("slowest by path (ms) " + slowestByPath);
		for (int n = 0; n < Math.min(8, count); n++) {
			int worst = 0;
			for (int i = 1; i < count; i++) {
				if (latencies[i] > latencies[worst]) {
					worst = i;
				}
			}
			slowest.add(latencies[worst] / 1_000_000 + " ms sent at " + sentAt[worst] / 1_000_000 + " " + pathOf[worst]);
			latencies[worst] = -1;
		}
		return new Result(tally, sorted, slowest, slowestByPath);
	}

	/** The answers and their latencies, sorted. */
	record Result(Tally tally, long[] sortedNanos, List<String> slowestSentAt, java.util.Map<String, Long> slowestMillisByPath) {

		/** The slowest answer on the paths starting so, in ms; 0 for none. */
		long slowestMillis(String pathPrefix) {
			return this.slowestMillisByPath.getOrDefault(pathPrefix, 0L);
		}


		Duration slowest() {
			return (this.sortedNanos.length == 0) ? Duration.ZERO
					: Duration.ofNanos(this.sortedNanos[this.sortedNanos.length - 1]);
		}

		long over(Duration limit) {
			return Arrays.stream(this.sortedNanos).filter(nanos -> nanos >= limit.toNanos()).count();
		}

		String summary() {
			long[] all = this.sortedNanos;
			return all.length + " answers: p50 " + ((all.length == 0) ? 0 : all[all.length / 2] / 1_000_000)
					+ " ms, p99 " + ((all.length == 0) ? 0 : all[(int) Math.min(all.length - 1, all.length * 0.99)] / 1_000_000)
					+ " ms, slowest " + slowest().toMillis() + " ms, at 1 s or over: " + over(Duration.ofSeconds(1)) + "; "
					+ this.tally + "; slowest answers, with when sent from the burst's start (ms): " + this.slowestSentAt;
		}

	}

}
