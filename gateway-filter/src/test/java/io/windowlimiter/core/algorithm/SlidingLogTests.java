package io.windowlimiter.core.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The ring storage of the sliding log (the default): same decisions, memory that follows the traffic. */
class SlidingLogTests extends ScriptTestSupport {

	private final WindowPolicy threePerMinute = policy(Algorithm.SLIDING_LOG, 3, Duration.ofMinutes(1));

	private long valueBytes() {
		return this.redis.opsForValue().size(this.key).block(TIMEOUT);
	}

	@Test
	void eachRequestCountsForExactlyOneWindow() {
		assertThat(decide(this.threePerMinute, T0 + 10_000)).isEqualTo(new Decision(true, 2, 60_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 20_000)).isEqualTo(new Decision(true, 1, 50_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 30_000)).isEqualTo(new Decision(true, 0, 40_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 69_999)).isEqualTo(new Decision(false, 0, 1, 1));
		// the request of T0 + 10s leaves the window at T0 + 70s, not before
		assertThat(decide(this.threePerMinute, T0 + 70_000)).isEqualTo(new Decision(true, 0, 10_000, 0));
	}

	@Test
	void remainingCountsOnlyRequestsStillInsideTheWindow() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		burst(five, T0, 2);
		burst(five, T0 + 30_000, 2);
		// at T0 + 61 s the first two have left: two in the window plus this one leaves 2
		assertThat(decide(five, T0 + 61_000)).isEqualTo(new Decision(true, 2, 29_000, 0));
	}

	@Test
	void requestsInTheSameMillisecondAreEachCounted() {
		WindowPolicy hundred = policy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1));
		assertThat(burst(hundred, T0, 150)).isEqualTo(100);
		assertThat(decide(hundred, T0 + 59_999).retryAfterMillis()).isEqualTo(1);
	}

	@Test
	void theRingGrowsWithTheRequestsInTheWindowAndShrinksWhenTheyLeave() {
		WindowPolicy hundred = policy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1));
		decide(hundred, T0);
		// a header and two slots, whatever the limit
		assertThat(valueBytes()).isEqualTo(8 + 8 * 2);
		burst(hundred, T0 + 1_000, 20);
		assertThat(valueBytes()).isEqualTo(8 + 8 * 30);
		// never past the limit, and a flood over it writes nothing
		burst(hundred, T0 + 2_000, 5_000);
		assertThat(valueBytes()).isEqualTo(8 + 8 * 100);
		// a minute later only the new request is in the window
		decide(hundred, T0 + 62_000);
		assertThat(valueBytes()).isEqualTo(8 + 8 * 2);
	}

	private Decision decide(WindowPolicy policy, long cost, long now) {
		return this.script.decideOne(this.key, policy, cost, Long.toString(now)).block(TIMEOUT);
	}

	@Test
	void aRequestCostingSeveralUnitsTakesAsManySlotsAcrossTheRingsEnd() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		burst(five, T0, 3);
		decide(five, T0 + 30_000);
		assertThat(valueBytes()).isEqualTo(8 + 8 * 5);
		// four units at once need three of the requests of T0 to leave
		assertThat(decide(five, 4, T0 + 1_000)).isEqualTo(new Decision(false, 1, 59_000, 59_000));
		// at T0 + 60 s they have left: the oldest kept is slot 3, so two units take slots 4 and 0
		assertThat(decide(five, 2, T0 + 60_000)).isEqualTo(new Decision(true, 2, 30_000, 0));
		assertThat(valueBytes()).isEqualTo(8 + 8 * 5);
		assertThat(decide(five, T0 + 89_999)).isEqualTo(new Decision(true, 1, 1, 0));
		assertThat(decide(five, T0 + 89_999)).isEqualTo(new Decision(true, 0, 1, 0));
		// read back in time order across the ring's end: the request of T0 + 30 s leaves first
		assertThat(decide(five, T0 + 89_999)).isEqualTo(new Decision(false, 0, 1, 1));
		assertThat(decide(five, 2, T0 + 119_999)).isEqualTo(new Decision(false, 1, 1, 1));
		assertThat(decide(five, 2, T0 + 120_000)).isEqualTo(new Decision(true, 1, 29_999, 0));
	}

	@Test
	void deniedRequestsWriteNothingAndTheKeyExpiresOneWindowAfterTheNewestRequest() {
		burst(this.threePerMinute, T0, 3);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		assertThat(decide(this.threePerMinute, T0 + 1_000).allowed()).isFalse();
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
		assertThat(pttl()).isBetween(59_000L, 60_000L);
	}

	@Test
	void aRaisedLimitCountsTheSameHistory() {
		WindowPolicy ten = policy(Algorithm.SLIDING_LOG, 10, Duration.ofMinutes(1));
		WindowPolicy twelve = policy(Algorithm.SLIDING_LOG, 12, Duration.ofMinutes(1));
		assertThat(burst(ten, T0, 10)).isEqualTo(10);
		assertThat(burst(twelve, T0 + 1_000, 10)).isEqualTo(2);
		assertThat(decide(twelve, T0 + 59_999).allowed()).isFalse();
		assertThat(burst(twelve, T0 + 60_000, 20)).isEqualTo(10);
	}

	@Test
	void aLoweredLimitDeniesUntilEnoughRequestsHaveLeft() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		for (int i = 0; i < 5; i++) {
			decide(five, T0 + 1_000 * i);
		}
		// with the limit now 3, the requests of T0, T0 + 1 s and T0 + 2 s must leave: the third at T0 + 62 s
		Decision denied = decide(this.threePerMinute, T0 + 10_000);
		assertThat(denied).isEqualTo(new Decision(false, 0, 50_000, 52_000));
		assertThat(decide(this.threePerMinute, T0 + 61_999).allowed()).isFalse();
		assertThat(decide(this.threePerMinute, T0 + 62_000)).isEqualTo(new Decision(true, 0, 1_000, 0));
	}

	@Test
	void aClockSteppingBackGivesNoFreshQuota() {
		// requests at t = 10 s, then the Redis clock reads 9 s (failover to a lagging replica)
		assertThat(burst(this.threePerMinute, T0 + 10_000, 2)).isEqualTo(2);
		assertThat(decide(this.threePerMinute, T0 + 9_000)).isEqualTo(new Decision(true, 0, 61_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 9_000)).isEqualTo(new Decision(false, 0, 61_000, 61_000));
		// the request made at 9 s was logged at 10 s, beside the others: all three leave at 70 s
		assertThat(decide(this.threePerMinute, T0 + 69_999).allowed()).isFalse();
		assertThat(burst(this.threePerMinute, T0 + 70_000, 5)).isEqualTo(3);
	}

	@Test
	void aChangedWindowCountsTheSameTimesAgainstTheNewLength() {
		assertThat(burst(this.threePerMinute, T0, 3)).isEqualTo(3);
		WindowPolicy threePerHour = policy(Algorithm.SLIDING_LOG, 3, Duration.ofHours(1));
		assertThat(decide(threePerHour, T0 + 120_000)).isEqualTo(new Decision(false, 0, 3_480_000, 3_480_000));
		WindowPolicy threePerTenSeconds = policy(Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(10));
		assertThat(burst(threePerTenSeconds, T0 + 120_000, 5)).isEqualTo(3);
	}

}
