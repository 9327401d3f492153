package io.windowlimiter.gateway.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TokenBucketTests extends ScriptTestSupport {

	private final TokenBucket bucket = new TokenBucket(this.redis);

	/** 60 per minute sustained (one per second), 5 at once. */
	private final WindowPolicy policy = new WindowPolicy(Algorithm.TOKEN_BUCKET, 60, Duration.ofMinutes(1), 5);

	@Test
	void aFullBucketGivesTheBurstThenOneRequestPerInterval() {
		for (int i = 1; i <= 5; i++) {
			Decision decision = decide(this.bucket, this.policy, T0);
			assertThat(decision).isEqualTo(new Decision(true, 5 - i, 1_000L * i, 0));
		}
		assertThat(decide(this.bucket, this.policy, T0)).isEqualTo(new Decision(false, 0, 1_000, 1_000));
		assertThat(decide(this.bucket, this.policy, T0 + 999).allowed()).isFalse();
		assertThat(decide(this.bucket, this.policy, T0 + 1_000)).isEqualTo(new Decision(true, 0, 5_000, 0));
		// idle for long enough, the bucket is full again, and no fuller
		assertThat(burst(this.bucket, this.policy, T0 + 60_000, 10)).isEqualTo(5);
	}

	@Test
	void remainingGrowsBackWithTime() {
		burst(this.bucket, this.policy, T0, 5);
		// 2.5 s later 2 whole requests have come back: this one takes one, one remains
		assertThat(decide(this.bucket, this.policy, T0 + 2_500)).isEqualTo(new Decision(true, 1, 3_500, 0));
	}

	@Test
	void fractionalIntervalsAreKeptExactlyEnough() {
		// 7 per minute: one every 8571.43 ms, burst 1
		WindowPolicy seven = new WindowPolicy(Algorithm.TOKEN_BUCKET, 7, Duration.ofMinutes(1), 1);
		int allowed = 0;
		for (long t = 0; t < 600_000; t += 100) {
			allowed += decide(this.bucket, seven, T0 + t).allowed() ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(70);
	}

	@Test
	void theKeyExpiresWhenTheBucketIsFullAndDenialsWriteNothing() {
		burst(this.bucket, this.policy, T0, 2);
		assertThat(pttl()).isBetween(1_000L, 2_000L);
		burst(this.bucket, this.policy, T0, 3);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		assertThat(decide(this.bucket, this.policy, T0 + 10).allowed()).isFalse();
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
	}

}
