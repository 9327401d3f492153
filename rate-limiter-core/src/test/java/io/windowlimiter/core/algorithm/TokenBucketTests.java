package io.windowlimiter.core.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TokenBucketTests extends ScriptTestSupport {

	/** 60 per minute sustained (one per second), 5 at once. */
	private final WindowPolicy policy = new WindowPolicy(Algorithm.TOKEN_BUCKET, 60, Duration.ofMinutes(1), 5);

	@Test
	void aFullBucketGivesTheBurstThenOneRequestPerInterval() {
		for (int i = 1; i <= 5; i++) {
			Decision decision = decide(this.policy, T0);
			assertThat(decision).isEqualTo(new Decision(true, 5 - i, 1_000L * i, 0));
		}
		assertThat(decide(this.policy, T0)).isEqualTo(new Decision(false, 0, 1_000, 1_000));
		assertThat(decide(this.policy, T0 + 999).allowed()).isFalse();
		assertThat(decide(this.policy, T0 + 1_000)).isEqualTo(new Decision(true, 0, 5_000, 0));
		// idle for long enough, the bucket is full again, and no fuller
		assertThat(burst(this.policy, T0 + 60_000, 10)).isEqualTo(5);
	}

	@Test
	void remainingGrowsBackWithTime() {
		burst(this.policy, T0, 5);
		// 2.5 s later 2 whole requests have come back: this one takes one, one remains
		assertThat(decide(this.policy, T0 + 2_500)).isEqualTo(new Decision(true, 1, 3_500, 0));
	}

	@Test
	void fractionalIntervalsAreKeptExactlyEnough() {
		// 7 per minute: one every 8571.43 ms, burst 1
		WindowPolicy seven = new WindowPolicy(Algorithm.TOKEN_BUCKET, 7, Duration.ofMinutes(1), 1);
		int allowed = 0;
		for (long t = 0; t < 600_000; t += 100) {
			allowed += decide(seven, T0 + t).allowed() ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(70);
	}

	@Test
	void theKeyExpiresWhenTheBucketIsFullAndDenialsWriteNothing() {
		burst(this.policy, T0, 2);
		assertThat(pttl()).isBetween(1_000L, 2_000L);
		burst(this.policy, T0, 3);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		assertThat(decide(this.policy, T0 + 10).allowed()).isFalse();
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
	}

	@Test
	void aRaisedLimitKeepsTheTheoreticalArrivalTime() {
		WindowPolicy tenPerMinute = new WindowPolicy(Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(1));
		assertThat(burst(tenPerMinute, T0, 10)).isEqualTo(10);
		// the bucket is full again at T0 + 60 s whatever the limit; 12 a minute refill every 5 s, so
		// one more fits once T0 + 60 s - 12 * 5 s + 5 s <= now
		WindowPolicy twelve = new WindowPolicy(Algorithm.TOKEN_BUCKET, 12, Duration.ofMinutes(1));
		assertThat(decide(twelve, T0 + 1_000)).isEqualTo(new Decision(false, 0, 4_000, 4_000));
		assertThat(burst(twelve, T0 + 5_000, 5)).isEqualTo(1);
		assertThat(burst(twelve, T0 + 65_000, 20)).isEqualTo(12);
	}

	@Test
	void aLoweredLimitKeepsTheTheoreticalArrivalTime() {
		WindowPolicy tenPerMinute = new WindowPolicy(Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(1));
		assertThat(burst(tenPerMinute, T0, 10)).isEqualTo(10);
		// 5 a minute refill every 12 s: one fits once T0 + 60 s - 5 * 12 s + 12 s <= now
		WindowPolicy five = new WindowPolicy(Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
		assertThat(decide(five, T0 + 1_000)).isEqualTo(new Decision(false, 0, 11_000, 11_000));
		assertThat(burst(five, T0 + 12_000, 5)).isEqualTo(1);
	}

	@Test
	void aChangedWindowKeepsTheTheoreticalArrivalTime() {
		WindowPolicy tenPerMinute = new WindowPolicy(Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(1));
		assertThat(burst(tenPerMinute, T0, 10)).isEqualTo(10);
		// 10 an hour, one every 6 min: the bucket still owes the 60 s it owed, so 9 fit now and the
		// tenth once those 60 s have passed
		WindowPolicy tenPerHour = new WindowPolicy(Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		assertThat(burst(tenPerHour, T0 + 1_000, 20)).isEqualTo(9);
		assertThat(decide(tenPerHour, T0 + 1_000).retryAfterMillis()).isEqualTo(59_000);
		assertThat(decide(tenPerHour, T0 + 60_000).allowed()).isTrue();
	}

	@Test
	void aClockSteppingBackGivesNoFreshQuota() {
		assertThat(burst(this.policy, T0 + 10_000, 5)).isEqualTo(5);
		// requests at 10 s, then the Redis clock reads 9 s: the bucket is empty, no emptier (its TAT is read
		// as at most a full refill ahead), so the next request waits one interval as on the earlier clock
		assertThat(decide(this.policy, T0 + 9_000)).isEqualTo(new Decision(false, 0, 1_000, 1_000));
		assertThat(decide(this.policy, T0 + 9_999).allowed()).isFalse();
		assertThat(decide(this.policy, T0 + 10_000).allowed()).isTrue();
		assertThat(decide(this.policy, T0 + 10_000).allowed()).isFalse();
	}

}
