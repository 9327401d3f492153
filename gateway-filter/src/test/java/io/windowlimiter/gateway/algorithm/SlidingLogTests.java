package io.windowlimiter.gateway.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The ring storage of the sliding log (the default): same decisions, fixed and small memory. */
class SlidingLogTests extends ScriptTestSupport {

	private final SlidingLog ring = new SlidingLog(this.redis);

	private final WindowPolicy threePerMinute = policy(Algorithm.SLIDING_LOG, 3, Duration.ofMinutes(1));

	private long valueBytes() {
		return this.redis.opsForValue().size(this.key).block(TIMEOUT);
	}

	@Test
	void eachRequestCountsForExactlyOneWindow() {
		assertThat(decide(this.ring, this.threePerMinute, T0 + 10_000)).isEqualTo(new Decision(true, 2, 60_000, 0));
		assertThat(decide(this.ring, this.threePerMinute, T0 + 20_000)).isEqualTo(new Decision(true, 1, 50_000, 0));
		assertThat(decide(this.ring, this.threePerMinute, T0 + 30_000)).isEqualTo(new Decision(true, 0, 40_000, 0));
		assertThat(decide(this.ring, this.threePerMinute, T0 + 69_999)).isEqualTo(new Decision(false, 0, 1, 1));
		// the request of T0 + 10s leaves the window at T0 + 70s, not before
		assertThat(decide(this.ring, this.threePerMinute, T0 + 70_000)).isEqualTo(new Decision(true, 0, 10_000, 0));
	}

	@Test
	void remainingCountsOnlyRequestsStillInsideTheWindow() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		burst(this.ring, five, T0, 2);
		burst(this.ring, five, T0 + 30_000, 2);
		// at T0 + 61 s the first two have left: two in the window plus this one leaves 2
		assertThat(decide(this.ring, five, T0 + 61_000)).isEqualTo(new Decision(true, 2, 29_000, 0));
	}

	@Test
	void requestsInTheSameMillisecondAreEachCounted() {
		WindowPolicy hundred = policy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1));
		assertThat(burst(this.ring, hundred, T0, 150)).isEqualTo(100);
		assertThat(decide(this.ring, hundred, T0 + 59_999).retryAfterMillis()).isEqualTo(1);
	}

	@Test
	void memoryIsEightBytesPerUnitOfLimitWhateverTheTraffic() {
		WindowPolicy hundred = policy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1));
		decide(this.ring, hundred, T0);
		assertThat(valueBytes()).isEqualTo(8 + 8 * 100);
		burst(this.ring, hundred, T0 + 1_000, 5_000);
		assertThat(valueBytes()).isEqualTo(8 + 8 * 100);
	}

	@Test
	void deniedRequestsWriteNothingAndTheKeyExpiresOneWindowAfterTheNewestRequest() {
		burst(this.ring, this.threePerMinute, T0, 3);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		assertThat(decide(this.ring, this.threePerMinute, T0 + 1_000).allowed()).isFalse();
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
		assertThat(pttl()).isBetween(59_000L, 60_000L);
	}

	@Test
	void aNewLimitStartsANewRing() {
		burst(this.ring, this.threePerMinute, T0, 3);
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		assertThat(burst(this.ring, five, T0 + 1_000, 10)).isEqualTo(5);
		assertThat(valueBytes()).isEqualTo(8 + 8 * 5);
	}

}
