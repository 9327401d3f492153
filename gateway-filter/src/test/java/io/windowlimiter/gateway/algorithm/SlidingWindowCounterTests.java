package io.windowlimiter.gateway.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SlidingWindowCounterTests extends ScriptTestSupport {

	private final SlidingWindowCounter counter = new SlidingWindowCounter(this.redis);

	private final WindowPolicy tenPerMinute = policy(Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofMinutes(1));

	@Test
	void thePreviousWindowCountsByItsOverlap() {
		assertThat(burst(this.counter, this.tenPerMinute, T0 + 30_000, 10)).isEqualTo(10);
		// 15 s into the next window: estimate = 10 * 45/60 + current = 7.5 + current, so 2 more fit
		assertThat(burst(this.counter, this.tenPerMinute, T0 + 75_000, 5)).isEqualTo(2);
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo((T0 / 60_000 + 1) + ":2:10");
	}

	@Test
	void remainingIsTheWholeRequestsLeftUnderTheEstimate() {
		burst(this.counter, this.tenPerMinute, T0 + 30_000, 4);
		// 30 s into the next window: 4 * 0.5 = 2 from before, plus this one: 3 used, 7 left
		Decision decision = decide(this.counter, this.tenPerMinute, T0 + 90_000);
		assertThat(decision).isEqualTo(new Decision(true, 7, 30_000, 0));
	}

	@Test
	void retryAfterWithinTheWindowIsWhenThePreviousWeightHasFadedEnough() {
		burst(this.counter, this.tenPerMinute, T0, 10);
		// 6 s into the next window the estimate is 10 * 54/60 = 9, so one more fits
		assertThat(decide(this.counter, this.tenPerMinute, T0 + 66_000).allowed()).isTrue();
		// previous 10, current 1: the next request needs 10 * (60 - e)/60 + 2 <= 10, so e >= 12 s
		Decision denied = decide(this.counter, this.tenPerMinute, T0 + 67_000);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterMillis()).isEqualTo(5_000);
		assertThat(decide(this.counter, this.tenPerMinute, T0 + 71_999).allowed()).isFalse();
		assertThat(decide(this.counter, this.tenPerMinute, T0 + 72_000).allowed()).isTrue();
	}

	@Test
	void retryAfterLooksIntoTheNextWindowWhenThisOneIsFull() {
		burst(this.counter, this.tenPerMinute, T0 + 10_000, 10);
		// current 10 becomes previous at T0 + 60s; one more needs 10 * (60 - e)/60 + 1 <= 10, e >= 6 s
		Decision denied = decide(this.counter, this.tenPerMinute, T0 + 20_000);
		assertThat(denied.retryAfterMillis()).isEqualTo(46_000);
		assertThat(decide(this.counter, this.tenPerMinute, T0 + 65_999).allowed()).isFalse();
		assertThat(decide(this.counter, this.tenPerMinute, T0 + 66_000).allowed()).isTrue();
	}

	@Test
	void countsOlderThanThePreviousWindowAreForgotten() {
		burst(this.counter, this.tenPerMinute, T0, 10);
		assertThat(burst(this.counter, this.tenPerMinute, T0 + 120_000, 10)).isEqualTo(10);
	}

	@Test
	void theKeyExpiresWhenTheNextWindowEnds() {
		decide(this.counter, this.tenPerMinute, T0 + 15_000);
		assertThat(pttl()).isBetween(104_000L, 105_000L);
		String stored = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		burst(this.counter, this.tenPerMinute, T0 + 15_000, 20);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		assertThat(stored).isNotEqualTo(full);
		decide(this.counter, this.tenPerMinute, T0 + 16_000);
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
	}

}
