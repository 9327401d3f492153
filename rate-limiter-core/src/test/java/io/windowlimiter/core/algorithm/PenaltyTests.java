package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Penalties (block-for) through the real script on Redis, with an explicit clock. */
class PenaltyTests extends ScriptTestSupport {

	private final String blockKey = this.key + ":block";

	private final WindowPolicy threePerMinute = policy(Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1));

	private final WindowPolicy hundredPerDay = policy(Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofDays(1));

	/** Decides with the two limits, the first blocking for 15 minutes when it refuses. */
	private Verdict decide(long now, long cost) {
		LimitScript.Arguments arguments = LimitScript
			.arguments(List.of(this.threePerMinute, this.hundredPerDay), cost, Long.toString(now))
			.withPenalty(List.of(Duration.ofMinutes(15).toMillis(), 0L));
		return this.script.decide(List.of(this.key, this.key + ":day", this.blockKey), arguments).block(TIMEOUT);
	}

	@Test
	void aRefusalBlocksForTheWholePenaltyWhateverTheWindow() {
		for (int i = 0; i < 3; i++) {
			assertThat(decide(T0 + 1_000, 1).allowed()).isTrue();
		}
		Verdict refused = decide(T0 + 2_000, 1);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.blockedMillis()).isEqualTo(900_000);
		assertThat(refused.retryAfterMillis()).isEqualTo(900_000);
		assertThat(refused.denying()).containsExactly(0);
		// the window has long ended, the block has not: refused, by the limit that blocked
		Verdict later = decide(T0 + 120_000, 1);
		assertThat(later.allowed()).isFalse();
		assertThat(later.denying()).containsExactly(0);
		assertThat(later.decisions().get(0).remaining()).isZero();
		long left = this.redis.getExpire(this.blockKey).block(TIMEOUT).toMillis();
		assertThat(later.retryAfterMillis()).isBetween(left - 1_000, left + 1_000);
		assertThat(later.blockedMillis()).isEqualTo(later.retryAfterMillis());
	}

	@Test
	void aBlockedRequestChargesNothingAndALiftedBlockFindsTheQuotaAsItWas() {
		for (int i = 0; i < 4; i++) {
			decide(T0 + 1_000, 1);
		}
		for (int i = 0; i < 20; i++) {
			assertThat(decide(T0 + 2_000 + i, 1).allowed()).isFalse();
		}
		// the daily limit counted the 3 allowed only; a read shows the blocking limit as it is, and the block
		Verdict read = decide(T0 + 3_000, 0);
		assertThat(read.decisions().get(1).remaining()).isEqualTo(97);
		assertThat(read.decisions().get(0).remaining()).isZero();
		assertThat(decide(T0 + 61_000, 0).decisions().get(0).remaining()).as("a new minute, while blocked").isEqualTo(3);
		assertThat(decide(T0 + 61_000, 0).blockedMillis()).isPositive();
		this.redis.delete(this.blockKey).block(TIMEOUT);
		Verdict next = decide(T0 + 61_000, 1);
		assertThat(next.allowed()).isTrue();
		assertThat(next.blockedMillis()).isZero();
		assertThat(next.decisions().get(1).remaining()).isEqualTo(96);
	}

	@Test
	void aLimitWithoutPenaltySetsNoBlockAndAPeekSetsNone() {
		WindowPolicy onePerDay = policy(Algorithm.FIXED_WINDOW, 1, Duration.ofDays(1));
		LimitScript.Arguments arguments = LimitScript.arguments(List.of(this.threePerMinute, onePerDay), 1,
				Long.toString(T0))
			.withPenalty(List.of(Duration.ofMinutes(15).toMillis(), 0L));
		List<String> keys = List.of(this.key, this.key + ":day1", this.blockKey);
		assertThat(this.script.decide(keys, arguments).block(TIMEOUT).allowed()).isTrue();
		Verdict refused = this.script.decide(keys, arguments).block(TIMEOUT);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.blockedMillis()).isZero();
		assertThat(this.redis.hasKey(this.blockKey).block(TIMEOUT)).isFalse();
		// a read at cost 0 of a used-up client never blocks it
		Verdict peek = this.script.decide(keys, arguments.withCost(0)).block(TIMEOUT);
		assertThat(peek.blockedMillis()).isZero();
		assertThat(this.redis.hasKey(this.blockKey).block(TIMEOUT)).isFalse();
	}

	@Test
	void theRetryAfterIsTheLongerOfBlockAndWindow() {
		WindowPolicy onePerDay = policy(Algorithm.FIXED_WINDOW, 1, Duration.ofDays(1));
		LimitScript.Arguments arguments = LimitScript.arguments(List.of(onePerDay), 1, Long.toString(T0 + 1_000))
			.withPenalty(List.of(Duration.ofMinutes(15).toMillis()));
		List<String> keys = List.of(this.key, this.blockKey);
		this.script.decide(keys, arguments).block(TIMEOUT);
		Verdict refused = this.script.decide(keys, arguments).block(TIMEOUT);
		assertThat(refused.blockedMillis()).isEqualTo(900_000);
		assertThat(refused.retryAfterMillis()).isEqualTo(86_400_000 - 1_000);
	}

}
