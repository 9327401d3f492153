package io.windowlimiter.core.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SlidingLogSortedSetTests extends ScriptTestSupport {

	private final WindowPolicy threePerMinute = policy(Algorithm.SLIDING_LOG_SORTED_SET, 3, Duration.ofMinutes(1));

	private long entries() {
		return this.redis.opsForZSet().size(this.key).block(TIMEOUT);
	}

	@Test
	void eachRequestCountsForExactlyOneWindow() {
		assertThat(decide(this.threePerMinute, T0 + 10_000).allowed()).isTrue();
		assertThat(decide(this.threePerMinute, T0 + 20_000).allowed()).isTrue();
		Decision third = decide(this.threePerMinute, T0 + 30_000);
		assertThat(third).isEqualTo(new Decision(true, 0, 40_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 69_999).allowed()).isFalse();
		// the request of T0 + 10s leaves the window at T0 + 70s, not before
		assertThat(decide(this.threePerMinute, T0 + 70_000).allowed()).isTrue();
		assertThat(entries()).isEqualTo(3);
	}

	@Test
	void retryAfterIsWhenTheOldestEntryLeavesTheWindow() {
		burst(this.threePerMinute, T0, 1);
		burst(this.threePerMinute, T0 + 5_000, 2);
		Decision denied = decide(this.threePerMinute, T0 + 30_000);
		assertThat(denied).isEqualTo(new Decision(false, 0, 30_000, 30_000));
		assertThat(decide(this.threePerMinute, T0 + 30_000 + 29_999).allowed()).isFalse();
		assertThat(decide(this.threePerMinute, T0 + 30_000 + 30_000).allowed()).isTrue();
	}

	@Test
	void deniedRequestsAreNotLogged() {
		assertThat(burst(this.threePerMinute, T0, 50)).isEqualTo(3);
		assertThat(entries()).isEqualTo(3);
	}

	@Test
	void requestsInTheSameMillisecondAreEachLogged() {
		WindowPolicy hundred = policy(Algorithm.SLIDING_LOG_SORTED_SET, 100, Duration.ofMinutes(1));
		assertThat(burst(hundred, T0, 100)).isEqualTo(100);
		assertThat(entries()).isEqualTo(100);
		assertThat(decide(hundred, T0).allowed()).isFalse();
	}

	@Test
	void theLogExpiresOneWindowAfterItsNewestEntry() {
		decide(this.threePerMinute, T0);
		assertThat(pttl()).isBetween(59_000L, 60_000L);
	}

	@Test
	void aLoweredLimitWaitsForEnoughEntriesToLeave() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG_SORTED_SET, 5, Duration.ofMinutes(1));
		for (int i = 0; i < 5; i++) {
			decide(five, T0 + 1_000 * i);
		}
		// with the limit now 3, entries of T0, T0+1s and T0+2s must leave: the third leaves at T0 + 62s
		Decision denied = decide(this.threePerMinute, T0 + 10_000);
		assertThat(denied.retryAfterMillis()).isEqualTo(52_000);
		assertThat(decide(this.threePerMinute, T0 + 61_999).allowed()).isFalse();
		assertThat(decide(this.threePerMinute, T0 + 62_000).allowed()).isTrue();
	}

	@Test
	void aRaisedLimitCountsTheSameEntries() {
		WindowPolicy ten = policy(Algorithm.SLIDING_LOG_SORTED_SET, 10, Duration.ofMinutes(1));
		WindowPolicy twelve = policy(Algorithm.SLIDING_LOG_SORTED_SET, 12, Duration.ofMinutes(1));
		assertThat(burst(ten, T0, 10)).isEqualTo(10);
		assertThat(burst(twelve, T0 + 1_000, 10)).isEqualTo(2);
	}

	@Test
	void aClockSteppingBackGivesNoFreshQuota() {
		assertThat(burst(this.threePerMinute, T0 + 10_000, 2)).isEqualTo(2);
		assertThat(burst(this.threePerMinute, T0 + 9_000, 3)).isEqualTo(1);
		// logged at 10 s beside the others, not at 9 s: all three leave at 70 s
		assertThat(decide(this.threePerMinute, T0 + 69_999)).isEqualTo(new Decision(false, 0, 1, 1));
		assertThat(this.redis.opsForZSet().score(this.key, Long.toString(T0 + 9_000)).block(TIMEOUT)).isNull();
		assertThat(burst(this.threePerMinute, T0 + 70_000, 5)).isEqualTo(3);
	}

}
