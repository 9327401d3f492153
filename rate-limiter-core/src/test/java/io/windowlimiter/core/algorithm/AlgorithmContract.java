package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import io.windowlimiter.core.key.RedisKeys;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every algorithm must do on any Redis topology: the expectations of the per-algorithm script
 * tests (window edges, Retry-After truth, TTLs, atomicity, NOSCRIPT reload), run by one subclass per
 * topology. Each test works on a key of its own whose hash tag is random, so on a cluster the tests
 * land on every master.
 */
abstract class AlgorithmContract {

	static final Duration TIMEOUT = Duration.ofSeconds(5);

	/** 2026-01-01T00:00:00Z: whole minutes, hours and days, so window edges are easy to read. */
	static final long T0 = 1_767_225_600_000L;

	static final long Y2025 = ScriptTestSupport.Y2025;

	final String key = "wrl:{contract:" + UUID.randomUUID() + "}:test";

	/** The Redis the limiter talks to. */
	abstract ReactiveStringRedisTemplate redis();

	/** Empties the script cache of every node that may run a script. */
	abstract void flushScripts();

	private LimitScript script;

	/** The limiter's script on {@link #redis()}, built on first use. */
	LimitScript script() {
		if (this.script == null) {
			this.script = new LimitScript(redis());
		}
		return this.script;
	}

	static WindowPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return new WindowPolicy(algorithm, limit, window);
	}

	Decision decide(WindowPolicy policy, long now) {
		return script().decideOne(this.key, policy, 1, Long.toString(now)).block(TIMEOUT);
	}

	int burst(WindowPolicy policy, long now, int count) {
		int allowed = 0;
		for (int i = 0; i < count; i++) {
			allowed += decide(policy, now).allowed() ? 1 : 0;
		}
		return allowed;
	}

	long pttl() {
		return redis().getExpire(this.key).block(TIMEOUT).toMillis();
	}

	String stored() {
		return redis().opsForValue().get(this.key).block(TIMEOUT);
	}

	long logEntries() {
		return redis().opsForZSet().size(this.key).block(TIMEOUT);
	}

	// fixed window

	@Test
	void fixedWindowCountsDownAndDeniesPastTheLimitUntilTheWindowEnds() {
		WindowPolicy tenPerMinute = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
		for (int i = 1; i <= 10; i++) {
			assertThat(decide(tenPerMinute, T0 + 1_000 * i)).isEqualTo(new Decision(true, 10 - i, 60_000 - 1_000 * i, 0));
		}
		assertThat(decide(tenPerMinute, T0 + 45_000)).isEqualTo(new Decision(false, 0, 15_000, 15_000));
		assertThat(decide(tenPerMinute, T0 + 59_999).allowed()).isFalse();
		assertThat(decide(tenPerMinute, T0 + 60_000)).isEqualTo(new Decision(true, 9, 60_000, 0));
	}

	@Test
	void fixedWindowKeyExpiresWithItsWindowAndDenialsWriteNothing() {
		WindowPolicy tenPerMinute = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
		decide(tenPerMinute, T0 + 15_000);
		assertThat(pttl()).isBetween(44_000L, 45_000L);
		// minutes since 2025, window 6 * 10^4 ms, count 1
		assertThat(stored()).isEqualTo((T0 - Y2025) / 60_000 + "6" + "1" + "141");
		burst(tenPerMinute, T0 + 15_000, 9);
		String full = stored();
		decide(tenPerMinute, T0 + 16_000);
		assertThat(stored()).isEqualTo(full);
	}

	// sliding log, sorted-set storage (the ring has its own tests in SlidingLogTests)

	@Test
	void slidingLogCountsEachRequestForExactlyOneWindow() {
		WindowPolicy threePerMinute = policy(Algorithm.SLIDING_LOG_SORTED_SET, 3, Duration.ofMinutes(1));
		assertThat(decide(threePerMinute, T0 + 10_000).allowed()).isTrue();
		assertThat(decide(threePerMinute, T0 + 20_000).allowed()).isTrue();
		assertThat(decide(threePerMinute, T0 + 30_000)).isEqualTo(new Decision(true, 0, 40_000, 0));
		assertThat(decide(threePerMinute, T0 + 69_999)).isEqualTo(new Decision(false, 0, 1, 1));
		assertThat(decide(threePerMinute, T0 + 70_000).allowed()).isTrue();
		assertThat(logEntries()).isEqualTo(3);
		assertThat(pttl()).isBetween(59_000L, 60_000L);
	}

	@Test
	void slidingLogLogsEveryRequestOfOneMillisecondAndNoDenial() {
		WindowPolicy hundred = policy(Algorithm.SLIDING_LOG_SORTED_SET, 100, Duration.ofMinutes(1));
		assertThat(burst(hundred, T0, 150)).isEqualTo(100);
		assertThat(logEntries()).isEqualTo(100);
	}

	// sliding window counter

	@Test
	void slidingWindowCounterWeighsThePreviousWindowByItsOverlap() {
		WindowPolicy tenPerMinute = policy(Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofMinutes(1));
		assertThat(burst(tenPerMinute, T0 + 30_000, 10)).isEqualTo(10);
		// 15 s into the next window: 10 * 45/60 = 7.5 taken, so 2 more fit
		assertThat(burst(tenPerMinute, T0 + 75_000, 5)).isEqualTo(2);
		// minutes since 2025, window 6 * 10^4 ms, counts 02 and 10
		assertThat(stored()).isEqualTo(((T0 - Y2025) / 60_000 + 1) + "6" + "02" + "10" + "142");
		assertThat(pttl()).isBetween(104_000L, 105_000L);
		// previous 10, current 2: one more needs 10 * (60 - e)/60 + 3 <= 10, so e >= 18 s
		assertThat(decide(tenPerMinute, T0 + 76_000)).isEqualTo(new Decision(false, 0, 2_000, 2_000));
		assertThat(burst(tenPerMinute, T0 + 180_000, 10)).isEqualTo(10);
	}

	// every algorithm

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void theWindowEdgeCaseOfTheDesignNotes(Algorithm algorithm) {
		// limit 100 per minute; 100 requests at second 59 and 100 at second 61
		WindowPolicy policy = policy(algorithm, 100, Duration.ofMinutes(1));
		int allowed = burst(policy, T0 + 59_000, 100) + burst(policy, T0 + 61_000, 100);
		int expected = switch (algorithm) {
			case FIXED_WINDOW -> 200;
			case SLIDING_LOG, SLIDING_LOG_SORTED_SET -> 100;
			// at second 61 the previous window (100) still weighs (60 - 1) / 60: floor(100 - 98.33) = 1 more
			case SLIDING_WINDOW_COUNTER -> 100 + (int) Math.floor(100 - 100 * (60.0 - 1) / 60);
			// full at second 59; two seconds refill floor(2000 / 600) = 3 requests at 100 per minute
			case TOKEN_BUCKET -> 100 + (int) Math.floor(2_000 / (60_000.0 / 100));
			case CONCURRENCY -> throw new IllegalArgumentException("not a rate");
		};
		assertThat(allowed).isEqualTo(expected);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void retryAfterIsTruthfulAndTight(Algorithm algorithm) {
		WindowPolicy policy = policy(algorithm, 7, Duration.ofSeconds(60));
		Random random = new Random(42);
		long now = T0;
		int denials = 0;
		for (int i = 0; i < 200; i++) {
			now += random.nextInt(8_000);
			Decision decision = decide(policy, now);
			if (!decision.allowed()) {
				denials++;
				long retry = decision.retryAfterMillis();
				assertThat(decide(policy, now + retry - 1).allowed()).as("%s at retry - 1 ms", algorithm).isFalse();
				now += retry;
				assertThat(decide(policy, now).allowed()).as("%s after retry-after", algorithm).isTrue();
			}
		}
		assertThat(denials).as("the trace must exercise denials").isGreaterThan(10);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void exactlyTheLimitPassesUnderConcurrencyOnTheRedisClock(Algorithm algorithm) {
		// 366-day epoch-aligned windows: an edge falls inside this test's second once a year at most
		WindowPolicy policy = policy(algorithm, 50, WindowPolicy.MAX_WINDOW);
		long allowed = Flux.range(0, 200)
			.flatMap(i -> script().decideOne(this.key, policy, 1, ""), 200)
			.filter(Decision::allowed)
			.count()
			.block(Duration.ofSeconds(30));
		assertThat(allowed).isEqualTo(50);
	}

	Decision decide(WindowPolicy policy, long cost, long now) {
		return script().decideOne(this.key, policy, cost, Long.toString(now)).block(TIMEOUT);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aCostAboveTheLimitIsRefusedForGoodWithoutAnErrorOrWriting(Algorithm algorithm) {
		// 5 a minute (the bucket: burst 5, one back every 12 s)
		WindowPolicy five = policy(algorithm, 5, Duration.ofMinutes(1));
		for (long cost : new long[] { 6, 7, WindowPolicy.MAX_LIMIT }) {
			// a fresh key: all 5 left, never allowed (-1), a finite reset, nothing written
			Decision fresh = decide(five, cost, T0);
			assertThat(fresh.allowed()).isFalse();
			assertThat(fresh.remaining()).as("%s cost %d", algorithm, cost).isEqualTo(5);
			assertThat(fresh.retryAfterMillis()).isEqualTo(Decision.NEVER);
			assertThat(fresh.resetMillis()).isBetween(0L, 120_000L);
			assertThat(redis().hasKey(this.key).block(TIMEOUT)).isFalse();
		}
		// cost = limit fits a fresh key
		assertThat(decide(five, 5, T0)).isEqualTo(new Decision(true, 0, 60_000, 0));
		redis().delete(this.key).block(TIMEOUT);

		// a key with entries: 2 used at T0
		assertThat(burst(five, T0, 2)).isEqualTo(2);
		boolean aString = algorithm != Algorithm.SLIDING_LOG_SORTED_SET;
		String before = aString ? redis().opsForValue().get(this.key).block(TIMEOUT) : null;
		for (long cost : new long[] { 6, 100, WindowPolicy.MAX_LIMIT }) {
			Decision used = decide(five, cost, T0 + 1_000);
			assertThat(used.allowed()).isFalse();
			assertThat(used.remaining()).as("%s cost %d", algorithm, cost).isEqualTo(3);
			assertThat(used.retryAfterMillis()).isEqualTo(Decision.NEVER);
			assertThat(used.resetMillis()).isBetween(1L, 120_000L);
		}
		if (aString) {
			assertThat(redis().opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(before);
		}
		else {
			assertThat(logEntries()).isEqualTo(2);
		}
		// cost = limit on a key with entries: refused with a truthful, finite Retry-After
		Decision full = decide(five, 5, T0 + 1_000);
		assertThat(full.allowed()).isFalse();
		assertThat(full.retryAfterMillis()).isPositive();
		assertThat(decide(five, 5, T0 + 1_000 + full.retryAfterMillis() - 1).allowed()).isFalse();
		assertThat(decide(five, 5, T0 + 1_000 + full.retryAfterMillis()).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aFlushedScriptCacheIsRefilledTransparently(Algorithm algorithm) {
		WindowPolicy policy = policy(algorithm, 2, Duration.ofMinutes(1));
		assertThat(decide(policy, T0).allowed()).isTrue();
		flushScripts();
		assertThat(decide(policy, T0).allowed()).isTrue();
		assertThat(decide(policy, T0).allowed()).isFalse();
	}

	/**
	 * The settle script on every topology (SettleScriptTests has what it does): its markers share the keys'
	 * slot, and after a script flush it is loaded again as the decision script is.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aReservationSettlesOnceAfterTheScriptCacheWasFlushed(Algorithm algorithm) {
		WindowPolicy policy = policy(algorithm, 10, Duration.ofMinutes(1));
		Verdict reserved = script().decide(List.of(new LimitScript.Limit(this.key, policy)), 6, Long.toString(T0))
			.block(TIMEOUT);
		flushScripts();
		String markers = RedisKeys.settledMarkers(this.key, T0 / 60_000);
		List<Long> resets = List.of(reserved.decisions().get(0).resetMillis());
		Settlement settled = script().settle(List.of(this.key), markers, "1", List.of(policy), resets, reserved.now(), 6,
				2, Long.toString(T0 + 1_000)).block(TIMEOUT);
		assertThat(settled).isEqualTo(new Settlement(true, List.of(-4L), 0));
		assertThat(script().settle(List.of(this.key), markers, "1", List.of(policy), resets, reserved.now(), 6, 2,
				Long.toString(T0 + 1_000)).block(TIMEOUT).applied()).isFalse();
		assertThat(script().decideOne(this.key, policy, 0, Long.toString(T0 + 1_000)).block(TIMEOUT).remaining())
			.isEqualTo(8);
	}

}
