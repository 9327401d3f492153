package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/** Several limits in one atomic script, all or nothing, and requests that cost more than one. */
class LimitScriptTests {

	private static final long T0 = ScriptTestSupport.T0;

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final LimitScript script = new LimitScript(this.redis);

	private final String tag = "{" + UUID.randomUUID() + "}";

	private LimitScript.Limit limit(Algorithm algorithm, long limit, Duration window, String name) {
		return new LimitScript.Limit("test:" + this.tag + ":" + name, new WindowPolicy(algorithm, limit, window));
	}

	private Verdict decide(List<LimitScript.Limit> limits, long cost, long now) {
		return this.script.decide(limits, cost, Long.toString(now)).block(Duration.ofSeconds(5));
	}

	@Test
	void aRequestDeniedByOneLimitIsCountedByNone() {
		LimitScript.Limit perSecond = limit(Algorithm.SLIDING_LOG, 2, Duration.ofSeconds(1), "second");
		LimitScript.Limit perHour = limit(Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1), "hour");
		List<LimitScript.Limit> both = List.of(perSecond, perHour);
		assertThat(decide(both, 1, T0).allowed()).isTrue();
		assertThat(decide(both, 1, T0).allowed()).isTrue();
		Verdict denied = decide(both, 1, T0 + 1);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.decisions().get(0).allowed()).isFalse();
		assertThat(denied.decisions().get(1)).isEqualTo(new Decision(true, 2, 3_600_000 - 1, 0));
		// the hourly count holds only the two allowed requests
		assertThat(this.redis.opsForValue().get(perHour.key()).block())
			.isEqualTo((T0 - ScriptTestSupport.Y2025) / 3_600_000 + "36" + "2" + "251");
		assertThat(denied.retryAfterMillis()).isEqualTo(999);
	}

	@Test
	void theLongestWaitOfTheDenyingLimitsIsTheRetryAfter() {
		LimitScript.Limit perSecond = limit(Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1), "second");
		LimitScript.Limit perMinute = limit(Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1), "minute");
		List<LimitScript.Limit> both = List.of(perSecond, perMinute);
		assertThat(decide(both, 1, T0 + 100).allowed()).isTrue();
		Verdict denied = decide(both, 1, T0 + 200);
		assertThat(denied.decisions()).extracting(Decision::retryAfterMillis).containsExactly(800L, 59_800L);
		assertThat(denied.retryAfterMillis()).isEqualTo(59_800);
		assertThat(decide(both, 1, T0 + 200 + 59_799).allowed()).isFalse();
		assertThat(decide(both, 1, T0 + 200 + 59_800).allowed()).isTrue();
	}

	/**
	 * The scripts define a module only for a request that names its algorithm: a route of five, the last in
	 * the last place, is decided and settled by every one of them.
	 */
	@Test
	void everyAlgorithmOfOneRouteIsDefinedForItsDecisionAndItsSettle() {
		List<Algorithm> algorithms = List.of(Algorithm.SLIDING_LOG, Algorithm.SLIDING_LOG_SORTED_SET,
				Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER);
		List<LimitScript.Limit> limits = algorithms.stream()
			.map(algorithm -> limit(algorithm, 10, Duration.ofMinutes(1), algorithm.name()))
			.toList();
		Verdict reserved = decide(limits, 4, T0);
		assertThat(reserved.decisions()).extracting(Decision::remaining).containsOnly(6L);

		Settlement settled = this.script
			.settle(limits.stream().map(LimitScript.Limit::key).toList(), "test:" + this.tag + ":settled", "1",
					limits.stream().map(LimitScript.Limit::policy).toList(),
					reserved.decisions().stream().map(Decision::resetMillis).toList(), reserved.now(), 4, 1,
					Long.toString(T0 + 10))
			.block(Duration.ofSeconds(5));
		assertThat(settled.changes()).as("each limit gave back 3").containsOnly(-3L);
		assertThat(decide(limits, 1, T0 + 20).decisions()).extracting(Decision::remaining).containsOnly(8L);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aRequestConsumesItsCost(Algorithm algorithm) {
		List<LimitScript.Limit> limit = List.of(limit(algorithm, 10, Duration.ofMinutes(1), "cost"));
		assertThat(decide(limit, 4, T0).decisions().get(0)).extracting(Decision::allowed, Decision::remaining)
			.containsExactly(true, 6L);
		assertThat(decide(limit, 4, T0).decisions().get(0).remaining()).isEqualTo(2);
		Decision denied = decide(limit, 4, T0).decisions().get(0);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.remaining()).as("the quota left is reported even when it is too little").isEqualTo(2);
		assertThat(decide(limit, 2, T0).allowed()).as("a cheaper request still fits").isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void retryAfterStaysTruthfulAndTightWithCosts(Algorithm algorithm) {
		List<LimitScript.Limit> limit = List.of(limit(algorithm, 9, Duration.ofMinutes(1), "truth"));
		Random random = new Random(7);
		long now = T0;
		int denials = 0;
		for (int i = 0; i < 250; i++) {
			now += random.nextInt(6_000);
			long cost = 1 + random.nextInt(4);
			Verdict verdict = decide(limit, cost, now);
			if (!verdict.allowed()) {
				denials++;
				long retry = verdict.retryAfterMillis();
				assertThat(decide(limit, cost, now + retry - 1).allowed()).as("%s cost %d at retry - 1", algorithm, cost)
					.isFalse();
				now += retry;
				assertThat(decide(limit, cost, now).allowed()).as("%s cost %d after retry", algorithm, cost).isTrue();
			}
		}
		assertThat(denials).isGreaterThan(20);
	}

	/** Cost 0 is the operator's read: the client's standing now, and not a byte written. */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aPeekTellsTheStandingAndWritesNothing(Algorithm algorithm) {
		LimitScript.Limit limit = limit(algorithm, 5, Duration.ofMinutes(1), "peek");
		List<LimitScript.Limit> limits = List.of(limit);
		Decision fresh = decide(limits, 0, T0).decisions().get(0);
		assertThat(fresh.remaining()).isEqualTo(5);
		assertThat(this.redis.hasKey(limit.key()).block()).as("a peek creates no key").isFalse();

		for (int i = 0; i < 3; i++) {
			decide(limits, 1, T0 + i);
		}
		String before = dump(limit.key());
		Decision peeked = decide(limits, 0, T0 + 10).decisions().get(0);
		assertThat(peeked.remaining()).isEqualTo(2);
		assertThat(peeked.resetMillis()).isPositive();
		assertThat(decide(limits, 0, T0 + 10).decisions().get(0)).as("reading twice reads the same").isEqualTo(peeked);
		assertThat(dump(limit.key())).as("a peek leaves the key as it was").isEqualTo(before);
		assertThat(decide(limits, 1, T0 + 10).decisions().get(0).remaining()).isEqualTo(1);

		decide(limits, 1, T0 + 11);
		assertThat(decide(limits, 0, T0 + 12).decisions().get(0).remaining()).as("used up").isZero();
	}

	private String dump(String key) {
		RedisScript<String> dump = RedisScript.of("return redis.call('DUMP', KEYS[1])", String.class);
		return this.redis.execute(dump, List.of(key)).blockFirst(Duration.ofSeconds(5));
	}

	@Test
	void ringAndSortedSetLogsAgreeWithCosts() {
		Random random = new Random(11);
		for (int trace = 0; trace < 20; trace++) {
			int max = 1 + random.nextInt(20);
			List<LimitScript.Limit> ring = List.of(limit(Algorithm.SLIDING_LOG, max, Duration.ofMinutes(1), "r" + trace));
			List<LimitScript.Limit> set = List.of(
					limit(Algorithm.SLIDING_LOG_SORTED_SET, max, Duration.ofMinutes(1), "s" + trace));
			long now = T0;
			for (int i = 0; i < 100; i++) {
				now += random.nextInt(3) == 0 ? 0 : random.nextInt(20_000);
				long cost = 1 + random.nextInt(max);
				assertThat(decide(ring, cost, now)).as("trace %d request %d", trace, i).isEqualTo(decide(set, cost, now));
			}
		}
	}

	@Test
	void loadingAheadPutsTheScriptInRedisUnderItsSha() {
		RedisTestServer.get().flushScripts();
		String sha = this.script.load().block(Duration.ofSeconds(5));
		assertThat(sha).isEqualTo(this.script.script().getSha1());
		Boolean exists = this.redis.execute(connection -> connection.scriptingCommands().scriptExists(sha))
			.blockFirst(Duration.ofSeconds(5));
		assertThat(exists).isTrue();
	}

}
