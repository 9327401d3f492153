package io.windowlimiter.core.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SlidingWindowCounterTests extends ScriptTestSupport {

	private final WindowPolicy tenPerMinute = policy(Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofMinutes(1));

	@Test
	void thePreviousWindowCountsByItsOverlap() {
		assertThat(burst(this.tenPerMinute, T0 + 30_000, 10)).isEqualTo(10);
		// 15 s into the next window: estimate = 10 * 45/60 + current = 7.5 + current, so 2 more fit
		assertThat(burst(this.tenPerMinute, T0 + 75_000, 5)).isEqualTo(2);
		// minutes since 2025, window 6 * 10^4 ms (mantissa of 1 digit, exponent 4), counts 02 and 10 (2 digits)
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT))
			.isEqualTo(((T0 - Y2025) / 60_000 + 1) + "6" + "02" + "10" + "142");
	}

	@Test
	void remainingIsTheWholeRequestsLeftUnderTheEstimate() {
		burst(this.tenPerMinute, T0 + 30_000, 4);
		// 30 s into the next window: 4 * 0.5 = 2 from before, plus this one: 3 used, 7 left
		Decision decision = decide(this.tenPerMinute, T0 + 90_000);
		assertThat(decision).isEqualTo(new Decision(true, 7, 30_000, 0));
	}

	@Test
	void retryAfterWithinTheWindowIsWhenThePreviousWeightHasFadedEnough() {
		burst(this.tenPerMinute, T0, 10);
		// 6 s into the next window the estimate is 10 * 54/60 = 9, so one more fits
		assertThat(decide(this.tenPerMinute, T0 + 66_000).allowed()).isTrue();
		// previous 10, current 1: the next request needs 10 * (60 - e)/60 + 2 <= 10, so e >= 12 s
		Decision denied = decide(this.tenPerMinute, T0 + 67_000);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterMillis()).isEqualTo(5_000);
		assertThat(decide(this.tenPerMinute, T0 + 71_999).allowed()).isFalse();
		assertThat(decide(this.tenPerMinute, T0 + 72_000).allowed()).isTrue();
	}

	@Test
	void retryAfterLooksIntoTheNextWindowWhenThisOneIsFull() {
		burst(this.tenPerMinute, T0 + 10_000, 10);
		// current 10 becomes previous at T0 + 60s; one more needs 10 * (60 - e)/60 + 1 <= 10, e >= 6 s
		Decision denied = decide(this.tenPerMinute, T0 + 20_000);
		assertThat(denied.retryAfterMillis()).isEqualTo(46_000);
		assertThat(decide(this.tenPerMinute, T0 + 65_999).allowed()).isFalse();
		assertThat(decide(this.tenPerMinute, T0 + 66_000).allowed()).isTrue();
	}

	@Test
	void theStoredValueIsOneIntegerRedisHoldsInSixteenBytes() {
		burst(this.tenPerMinute, T0 + 30_000, 10);
		burst(this.tenPerMinute, T0 + 90_000, 3);
		// minutes since 2025, window 6 * 10^4 ms, counts 03 and 10
		assertThat(stored()).isEqualTo(((T0 - Y2025) / 60_000 + 1) + "6" + "03" + "10" + "142");
		assertThat(encoding()).isEqualTo("int");
	}

	@Test
	void theLayoutsOfThePreviousVersionsAreRead() {
		// "index:current:previous:window", written by the previous version: 2 this minute, 10 the minute
		// before; 15 s in, 10 * 45/60 + 2 = 9.5: no more fit... until 10 * (60 - e)/60 + 3 <= 10, e >= 18 s
		store((T0 / 60_000 + 1) + ":2:10:60000");
		assertThat(decide(this.tenPerMinute, T0 + 75_000)).isEqualTo(new Decision(false, 0, 3_000, 3_000));
		assertThat(decide(this.tenPerMinute, T0 + 78_000).allowed()).isTrue();
		assertThat(stored()).isEqualTo(((T0 - Y2025) / 60_000 + 1) + "6" + "03" + "10" + "142");
		// "index:current:previous", older still, as of the configured window
		store((T0 / 60_000) + ":4:0");
		assertThat(burst(this.tenPerMinute, T0 + 30_000, 10)).isEqualTo(6);
		// of an hour: its 6, estimated now, become this minute's
		store((T0 / 3_600_000) + ":6:0:3600000");
		assertThat(burst(this.tenPerMinute, T0 + 1_200_000, 10)).isEqualTo(4);
	}

	@Test
	void windowsBefore2025AndCountsOfTenDigitsKeepThePreviousLayout() {
		// 1970: the window [960 s, 1,020 s), index 16
		assertThat(decide(this.tenPerMinute, 1_000_000).allowed()).isTrue();
		assertThat(stored()).isEqualTo("16:1:0:60000");
		assertThat(decide(this.tenPerMinute, 1_010_000).remaining()).isEqualTo(8);

		WindowPolicy billion = policy(Algorithm.SLIDING_WINDOW_COUNTER, 1_000_000_000, Duration.ofMinutes(1));
		this.redis.delete(this.key).block(TIMEOUT);
		this.script.decideOne(this.key, billion, 999_999_999, Long.toString(T0 + 1_000)).block(TIMEOUT);
		assertThat(stored()).isEqualTo(((T0 - Y2025) / 60_000) + "6" + "999999999" + "000000000" + "149");
		assertThat(decide(billion, T0 + 2_000).remaining()).isZero();
		assertThat(stored()).isEqualTo((T0 / 60_000) + ":1000000000:0:60000");
		assertThat(decide(billion, T0 + 3_000).allowed()).isFalse();
	}

	@Test
	void windowLengthsOfManyDigitsRoundTrip() {
		// 1,234,567 ms: a mantissa of 7 digits; 3 in one window, then 2 more in the next, 3 weighing in
		WindowPolicy odd = policy(Algorithm.SLIDING_WINDOW_COUNTER, 5, Duration.ofMillis(1_234_567));
		long start = (T0 / 1_234_567 + 1) * 1_234_567;
		assertThat(burst(odd, start, 3)).isEqualTo(3);
		assertThat(stored()).endsWith("1234567" + "3" + "0" + "701");
		assertThat(encoding()).isEqualTo("int");
		// at the very start of the next window the 3 weigh in full: 2 more fit, then none
		assertThat(burst(odd, start + 1_234_567, 5)).isEqualTo(2);
	}

	@Test
	void countsOlderThanThePreviousWindowAreForgotten() {
		burst(this.tenPerMinute, T0, 10);
		assertThat(burst(this.tenPerMinute, T0 + 120_000, 10)).isEqualTo(10);
	}

	@Test
	void theKeyExpiresWhenTheNextWindowEnds() {
		decide(this.tenPerMinute, T0 + 15_000);
		assertThat(pttl()).isBetween(104_000L, 105_000L);
		String stored = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		burst(this.tenPerMinute, T0 + 15_000, 20);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		assertThat(stored).isNotEqualTo(full);
		decide(this.tenPerMinute, T0 + 16_000);
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
	}

	@Test
	void aRaisedLimitCountsTheSameRequests() {
		assertThat(burst(this.tenPerMinute, T0 + 30_000, 10)).isEqualTo(10);
		WindowPolicy twelve = policy(Algorithm.SLIDING_WINDOW_COUNTER, 12, Duration.ofMinutes(1));
		assertThat(burst(twelve, T0 + 40_000, 10)).isEqualTo(2);
	}

	@Test
	void aLoweredLimitDeniesUntilTheEstimateOfAtMostTheLimitFallsBelowIt() {
		assertThat(burst(this.tenPerMinute, T0 + 10_000, 8)).isEqualTo(8);
		WindowPolicy five = policy(Algorithm.SLIDING_WINDOW_COUNTER, 5, Duration.ofMinutes(1));
		// the 8 count as 5, the most this limit lets a window hold; next window: 5 * (60 - e)/60 + 1 <= 5
		// once e >= 12 s, at T0 + 72 s (not T0 + 90 s, as 8 would)
		assertThat(decide(five, T0 + 20_000)).isEqualTo(new Decision(false, 0, 52_000, 52_000));
		assertThat(decide(five, T0 + 71_999).allowed()).isFalse();
		assertThat(decide(five, T0 + 72_000).allowed()).isTrue();
	}

	@Test
	void aChangedWindowCarriesTheEstimateIntoTheNewWindow() {
		assertThat(burst(this.tenPerMinute, T0 + 30_000, 10)).isEqualTo(10);
		WindowPolicy tenPerHour = policy(Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofHours(1));
		// ten used this minute are ten used in this hour: the next one needs
		// 10 * (60 - e)/60 + 1 <= 10 in the next hour, e >= 6 min
		Decision denied = decide(tenPerHour, T0 + 40_000);
		assertThat(denied).isEqualTo(new Decision(false, 0, 3_920_000, 3_920_000));
		// hours since 2025, window 36 * 10^5 ms, counts 10 and 00
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT))
			.isEqualTo(((T0 - Y2025) / 3_600_000) + "36" + "10" + "00" + "252");
		// read again later, the stored counts no longer fade by the minute
		assertThat(decide(tenPerHour, T0 + 180_000).allowed()).isFalse();
		assertThat(decide(tenPerHour, T0 + 3_959_999).allowed()).isFalse();
		assertThat(decide(tenPerHour, T0 + 3_960_000).allowed()).isTrue();
	}

	@Test
	void aShorterWindowStartsWithWhatTheLongerOneEstimated() {
		WindowPolicy tenPerHour = policy(Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofHours(1));
		assertThat(burst(tenPerHour, T0 + 10_000, 6)).isEqualTo(6);
		// at T0 + 20 min, the hour's 6 become this minute's 6: 4 more, then the weight fades
		assertThat(burst(this.tenPerMinute, T0 + 1_200_000, 10)).isEqualTo(4);
		assertThat(burst(this.tenPerMinute, T0 + 1_320_000, 20)).isEqualTo(10);
	}

	@Test
	void aClockSteppingBackKeepsCountingTheLaterWindow() {
		assertThat(burst(this.tenPerMinute, T0 + 70_000, 6)).isEqualTo(6);
		// the Redis clock reads T0 + 50 s: the window [T0 + 60 s, T0 + 120 s) stays the current one
		assertThat(burst(this.tenPerMinute, T0 + 50_000, 10)).isEqualTo(4);
		Decision denied = decide(this.tenPerMinute, T0 + 50_000);
		// its ten become the previous window's at T0 + 120 s: 10 * (60 - e)/60 + 1 <= 10 once e >= 6 s
		assertThat(denied).isEqualTo(new Decision(false, 0, 76_000, 76_000));
		assertThat(decide(this.tenPerMinute, T0 + 125_999).allowed()).isFalse();
		assertThat(decide(this.tenPerMinute, T0 + 126_000).allowed()).isTrue();
	}

	@Test
	void aPreviousWindowAheadOfTheClockCountsInFull() {
		assertThat(burst(this.tenPerMinute, T0 + 50_000, 8)).isEqualTo(8);
		// 10 s into the next window: 8 * 50/60 = 6.67 + 2 fit
		assertThat(burst(this.tenPerMinute, T0 + 70_000, 2)).isEqualTo(2);
		// back to T0 + 55 s, before the current window began: the previous 8 weigh in full, 8 + 2 + 1 > 10;
		// 8 * (60 - e)/60 + 3 <= 10 once e >= 7.5 s, at T0 + 67.5 s
		assertThat(decide(this.tenPerMinute, T0 + 55_000)).isEqualTo(new Decision(false, 0, 12_500, 12_500));
		assertThat(decide(this.tenPerMinute, T0 + 67_499).allowed()).isFalse();
		assertThat(decide(this.tenPerMinute, T0 + 67_500).allowed()).isTrue();
	}

}
