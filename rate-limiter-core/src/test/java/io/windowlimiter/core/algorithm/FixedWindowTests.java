package io.windowlimiter.core.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FixedWindowTests extends ScriptTestSupport {

	/** Minutes from 2025-01-01 to T0: the window index the stored integer starts with. */
	private static final long MINUTES = (T0 - Y2025) / 60_000;

	private final WindowPolicy tenPerMinute = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));

	@Test
	void countsDownWithinOneWindowAndDeniesPastTheLimit() {
		for (int i = 1; i <= 10; i++) {
			Decision decision = decide(this.tenPerMinute, T0 + 1_000 * i);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(10 - i);
			assertThat(decision.resetMillis()).isEqualTo(60_000 - 1_000 * i);
			assertThat(decision.retryAfterMillis()).isZero();
		}
		Decision denied = decide(this.tenPerMinute, T0 + 45_000);
		assertThat(denied).isEqualTo(new Decision(false, 0, 15_000, 15_000));
	}

	@Test
	void aNewWindowStartsFromZeroAtTheClockEdge() {
		// not at T0 + 59.999 s: the key's expiry (PX, real time) would then be 1 ms and could pass mid-burst
		assertThat(burst(this.tenPerMinute, T0 + 50_000, 11)).isEqualTo(10);
		assertThat(decide(this.tenPerMinute, T0 + 59_999).allowed()).isFalse();
		Decision next = decide(this.tenPerMinute, T0 + 60_000);
		assertThat(next.allowed()).isTrue();
		assertThat(next.remaining()).isEqualTo(9);
	}

	@Test
	void retryAfterIsTheWindowEndAndIsExact() {
		burst(this.tenPerMinute, T0 + 20_000, 10);
		Decision denied = decide(this.tenPerMinute, T0 + 20_500);
		assertThat(denied.retryAfterMillis()).isEqualTo(39_500);
		assertThat(decide(this.tenPerMinute, T0 + 20_500 + 39_499).allowed()).isFalse();
		assertThat(decide(this.tenPerMinute, T0 + 20_500 + 39_500).allowed()).isTrue();
	}

	@Test
	void theKeyExpiresWhenItsWindowEndsAndDenialsWriteNothing() {
		decide(this.tenPerMinute, T0 + 15_000);
		assertThat(pttl()).isBetween(44_000L, 45_000L);
		// minutes since 2025, window 6 * 10^4 ms, count 1
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(MINUTES + "6" + "1" + "141");

		burst(this.tenPerMinute, T0 + 15_000, 9);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		decide(this.tenPerMinute, T0 + 16_000);
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
	}

	@Test
	void theStoredValueIsOneIntegerRedisHoldsInSixteenBytes() {
		burst(this.tenPerMinute, T0 + 15_000, 10);
		assertThat(stored()).isEqualTo(MINUTES + "6" + "10" + "142");
		assertThat(encoding()).isEqualTo("int");
		// a day's window: 864 * 10^5 ms, a mantissa of 3 digits
		WindowPolicy perDay = policy(Algorithm.FIXED_WINDOW, 100_000, Duration.ofDays(1));
		this.redis.delete(this.key).block(TIMEOUT);
		this.script.decideOne(this.key, perDay, 99_999, Long.toString(T0 + 15_000)).block(TIMEOUT);
		assertThat(stored()).isEqualTo((T0 - Y2025) / 86_400_000 + "864" + "99999" + "355");
		assertThat(encoding()).isEqualTo("int");
	}

	/**
	 * A value of up to 15 digits is read by arithmetic (the script's fast path), a longer one by the general path: both
	 * read the same window and count, and write the next count alike.
	 */
	@Test
	void integersOfFifteenDigitsAndOfSixteenReadAlike() {
		WindowPolicy large = policy(Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofMinutes(1));
		// 6 digits of minutes since 2025, "6", the count, "14" and its digits: 15, 16, 16 digits
		for (long count : new long[] { 99_999, 100_000, 999_998 }) {
			String value = MINUTES + "6" + count + "14" + Long.toString(count).length();
			store(value);
			assertThat(decide(large, T0 + 30_000)).as("after %s (%d digits)", value, value.length())
				.isEqualTo(new Decision(true, 1_000_000 - count - 1, 30_000, 0));
			assertThat(stored()).isEqualTo(MINUTES + "6" + (count + 1) + "14" + Long.toString(count + 1).length());
		}
		// the last one left: 999,999 of 1,000,000 used, one more passes, then none
		assertThat(decide(large, T0 + 31_000)).isEqualTo(new Decision(true, 0, 29_000, 0));
		assertThat(decide(large, T0 + 32_000)).isEqualTo(new Decision(false, 0, 28_000, 28_000));
	}

	@Test
	void theStringLayoutIsRead() {
		// "index:count:window", written when the integer does not fit, of this very window: 7 of 10 used
		store((T0 / 60_000) + ":7:60000");
		assertThat(burst(this.tenPerMinute, T0 + 30_000, 10)).isEqualTo(3);
		assertThat(stored()).isEqualTo(MINUTES + "6" + "10" + "142");
		// of an hour that holds this minute: its 9 are used in this minute, which ends as minutes do
		store((T0 / 3_600_000) + ":9:3600000");
		assertThat(decide(this.tenPerMinute, T0 + 1_200_000)).isEqualTo(new Decision(true, 0, 60_000, 0));
		assertThat(decide(this.tenPerMinute, T0 + 1_259_999).allowed()).isFalse();
		assertThat(burst(this.tenPerMinute, T0 + 1_260_000, 20)).isEqualTo(10);
		// an ended window reads as zero
		store((T0 / 60_000 - 1) + ":10:60000");
		assertThat(burst(this.tenPerMinute, T0 + 1_000, 20)).isEqualTo(10);
	}

	@Test
	void windowsEndingBefore2025AndCountsOfTenDigitsKeepThePreviousLayout() {
		// 1970: the window [960 s, 1,020 s), index 16
		assertThat(decide(this.tenPerMinute, 1_000_000).allowed()).isTrue();
		assertThat(stored()).isEqualTo("16:1:60000");
		assertThat(decide(this.tenPerMinute, 1_010_000).remaining()).isEqualTo(8);

		WindowPolicy billion = policy(Algorithm.FIXED_WINDOW, 1_000_000_000, Duration.ofMinutes(1));
		this.redis.delete(this.key).block(TIMEOUT);
		assertThat(this.script.decideOne(this.key, billion, 999_999_999, Long.toString(T0 + 1_000)).block(TIMEOUT)
			.remaining()).isEqualTo(1);
		assertThat(stored()).isEqualTo(MINUTES + "6" + "999999999" + "149");
		assertThat(decide(billion, T0 + 2_000).remaining()).isZero();
		assertThat(stored()).isEqualTo((T0 / 60_000) + ":1000000000:60000");
		assertThat(decide(billion, T0 + 3_000)).isEqualTo(new Decision(false, 0, 57_000, 57_000));
	}

	@Test
	void windowsAreAlignedToTheEpoch() {
		WindowPolicy perSecond = policy(Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(1_000));
		assertThat(decide(perSecond, 1_999).allowed()).isTrue();
		assertThat(decide(perSecond, 2_000).allowed()).isTrue();
		assertThat(decide(perSecond, 2_999).retryAfterMillis()).isEqualTo(1);
	}

	@Test
	void aRaisedLimitCountsTheSameWindow() {
		assertThat(burst(this.tenPerMinute, T0 + 10_000, 10)).isEqualTo(10);
		WindowPolicy twelve = policy(Algorithm.FIXED_WINDOW, 12, Duration.ofMinutes(1));
		assertThat(burst(twelve, T0 + 20_000, 10)).isEqualTo(2);
		assertThat(burst(twelve, T0 + 60_000, 20)).isEqualTo(12);
	}

	@Test
	void aLoweredLimitDeniesUntilTheWindowEnds() {
		assertThat(burst(this.tenPerMinute, T0 + 10_000, 8)).isEqualTo(8);
		WindowPolicy five = policy(Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1));
		assertThat(decide(five, T0 + 20_000)).isEqualTo(new Decision(false, 0, 40_000, 40_000));
		assertThat(burst(five, T0 + 60_000, 10)).isEqualTo(5);
	}

	@Test
	void aLongerWindowThatContainsTheCountedOneKeepsItsCount() {
		assertThat(burst(this.tenPerMinute, T0 + 10_000, 10)).isEqualTo(10);
		WindowPolicy tenPerHour = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		// the minute's ten lie in this hour: denied until the hour ends
		assertThat(decide(tenPerHour, T0 + 30_000)).isEqualTo(new Decision(false, 0, 3_570_000, 3_570_000));
		assertThat(decide(tenPerHour, T0 + 3_599_999).allowed()).isFalse();
		assertThat(burst(tenPerHour, T0 + 3_600_000, 20)).isEqualTo(10);
	}

	@Test
	void aShorterWindowCarriesTheCountIntoTheCurrentWindowOnly() {
		WindowPolicy tenPerHour = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		assertThat(burst(tenPerHour, T0 + 10_000, 10)).isEqualTo(10);
		// twenty minutes in, the limit becomes 10 a minute: the hour's ten are used in this minute, not
		// until the hour ends
		assertThat(decide(this.tenPerMinute, T0 + 1_200_000)).isEqualTo(new Decision(false, 0, 60_000, 60_000));
		// the minute's window first, then the hour's, kept with its ten while it lasts (and the key with it)
		assertThat(stored()).isEqualTo((MINUTES + 20) + "6" + "10" + "142" + ";" + (MINUTES / 60) + "36" + "10" + "252");
		assertThat(pttl()).isBetween(3_600_000 - 1_200_000 - 1_000L, 3_600_000 - 1_200_000L);
		assertThat(decide(this.tenPerMinute, T0 + 1_259_999).allowed()).isFalse();
		assertThat(burst(this.tenPerMinute, T0 + 1_260_000, 20)).isEqualTo(10);
	}

	@Test
	void aWindowThatDoesNotAlignWithTheCountedOneEndsAtItsOwnEdge() {
		// 90 s windows: [T0, T0 + 90 s) holds ten; then 60 s windows, whose edge T0 + 60 s falls within it
		WindowPolicy ninety = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofSeconds(90));
		assertThat(T0 % 90_000).isZero();
		assertThat(burst(ninety, T0 + 10_000, 10)).isEqualTo(10);
		assertThat(decide(this.tenPerMinute, T0 + 20_000)).isEqualTo(new Decision(false, 0, 40_000, 40_000));
		assertThat(decide(this.tenPerMinute, T0 + 59_999).allowed()).isFalse();
		assertThat(decide(this.tenPerMinute, T0 + 60_000).allowed()).isTrue();
	}

	@Test
	void aStoredWindowOfAnotherLengthThatEndedBeforeThisOneBeganReadsAsZero() {
		WindowPolicy tenPerHour = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		assertThat(burst(this.tenPerMinute, T0 + 3_540_000, 10)).isEqualTo(10);
		// the minute [59 min, 60 min) ended as the next hour began
		assertThat(burst(tenPerHour, T0 + 3_600_000, 20)).isEqualTo(10);
	}

	@Test
	void aClockSteppingBackKeepsCountingTheLaterWindow() {
		// five requests in the window [T0 + 60 s, T0 + 120 s), then the Redis clock reads T0 + 50 s
		assertThat(burst(this.tenPerMinute, T0 + 70_000, 5)).isEqualTo(5);
		assertThat(burst(this.tenPerMinute, T0 + 50_000, 10)).isEqualTo(5);
		Decision denied = decide(this.tenPerMinute, T0 + 50_000);
		assertThat(denied).isEqualTo(new Decision(false, 0, 70_000, 70_000));
		assertThat(decide(this.tenPerMinute, T0 + 119_999).allowed()).isFalse();
		assertThat(burst(this.tenPerMinute, T0 + 120_000, 20)).isEqualTo(10);
	}

	@Test
	void requestsAtTenSecondsThenAtNineGetNoFreshQuota() {
		// 10 s windows: t = 10 s opens a window, t = 9 s lies in the one before
		WindowPolicy perTenSeconds = policy(Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(10));
		assertThat(burst(perTenSeconds, T0 + 10_000, 3)).isEqualTo(3);
		assertThat(burst(perTenSeconds, T0 + 9_000, 3)).isZero();
		assertThat(decide(perTenSeconds, T0 + 9_000).retryAfterMillis()).isEqualTo(11_000);
	}

}
