package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ring log must decide exactly as the sorted-set log: every field of every decision, on many
 * seeded random traces (bursts in one millisecond, steady arrivals, idle gaps longer than a window,
 * the clock stepping back, limits from 1 to 40, windows from a minute to an hour, a quarter of the
 * requests costing more than 1: the ring keeps one entry per request, the sorted set one per unit).
 */
class SlidingLogDifferentialTests {

	private static final int TRACES = 120;

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final LimitScript script = new LimitScript(this.redis);

	private record Trace(WindowPolicy ringPolicy, WindowPolicy sortedSetPolicy, List<Long> times, List<Long> costs) {
	}

	private static Trace trace(Random random) {
		int limit = 1 + random.nextInt(40);
		// Keys expire in real time, by PEXPIRE: windows of a minute or more outlast a replay, so only the
		// simulated clock decides.
		long window = switch (random.nextInt(3)) {
			case 0 -> 60_000;
			case 1 -> 60_000 + random.nextInt(600_000);
			default -> 3_600_000;
		};
		List<Long> times = new ArrayList<>();
		List<Long> costs = new ArrayList<>();
		long now = 1_767_225_600_000L + random.nextInt(1_000_000);
		int requests = 100 + random.nextInt(200);
		for (int i = 0; i < requests; i++) {
			int shape = random.nextInt(10);
			if (shape < 2) {
				now += 0; // same millisecond: a burst
			}
			else if (shape < 4 && !times.isEmpty()) {
				// exactly when an earlier request leaves the window, or a millisecond before: the edges
				long edge = times.get(random.nextInt(times.size())) + window - random.nextInt(2);
				now = Math.max(now, edge);
			}
			else if (shape == 4 && random.nextInt(4) == 0) {
				// the Redis clock steps back (failover to a replica whose clock lags), by up to a window
				now -= 1 + random.nextInt((int) window);
			}
			else if (shape < 9) {
				now += random.nextInt((int) Math.max(2, 3 * window / limit));
			}
			else {
				now += window + random.nextInt((int) window + 1); // idle longer than a window
			}
			times.add(now);
			costs.add((random.nextInt(4) == 0) ? 1L + random.nextInt(limit) : 1L);
		}
		return new Trace(new WindowPolicy(Algorithm.SLIDING_LOG, limit, Duration.ofMillis(window)),
				new WindowPolicy(Algorithm.SLIDING_LOG_SORTED_SET, limit, Duration.ofMillis(window)), times, costs);
	}

	private Flux<String> mismatches(Trace trace) {
		String ringKey = "diff:{" + UUID.randomUUID() + "}:ring";
		String setKey = "diff:{" + UUID.randomUUID() + "}:set";
		return Flux.range(0, trace.times().size()).concatMap(i -> {
			String now = Long.toString(trace.times().get(i));
			long cost = trace.costs().get(i);
			return this.script.decideOne(ringKey, trace.ringPolicy(), cost, now)
				.zipWith(this.script.decideOne(setKey, trace.sortedSetPolicy(), cost, now))
				.filter(pair -> !pair.getT1().equals(pair.getT2()))
				.map(pair -> trace.ringPolicy() + " at " + now + " cost " + cost + ": ring " + pair.getT1()
						+ " sorted set " + pair.getT2());
		});
	}

	@Test
	void ringAndSortedSetDecideAlikeOnRandomTraces() {
		Random random = new Random(20261202);
		List<Trace> traces = new ArrayList<>();
		for (int i = 0; i < TRACES; i++) {
			traces.add(trace(random));
		}
		List<String> mismatches = Flux.fromIterable(traces)
			.flatMap(this::mismatches, 8)
			.collectList()
			.block(Duration.ofMinutes(2));
		assertThat(mismatches).isEmpty();
		assertThat(traces.stream().mapToInt(trace -> trace.times().size()).sum()).isGreaterThan(20_000);
	}

}
