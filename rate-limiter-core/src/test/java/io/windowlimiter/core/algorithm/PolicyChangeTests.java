package io.windowlimiter.core.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client's policy changes while its key holds counts (a plan changed, an override began or ended, a
 * config edit): the next decision starts from a state the new policy could have produced. It never locks
 * the client out for longer than the new policy's window, and never hands out a fresh quota. The issue's
 * scenarios, for every algorithm, with windows and limits that differ.
 */
class PolicyChangeTests extends ScriptTestSupport {

	private static final long HOUR = 3_600_000;

	private static final long DAY = 24 * HOUR;

	private Decision decide(WindowPolicy policy, long cost, long now) {
		return this.script.decideOne(this.key, policy, cost, Long.toString(now)).block(TIMEOUT);
	}

	private static WindowPolicy limit(Algorithm algorithm, long limit, Duration window) {
		return (algorithm == Algorithm.TOKEN_BUCKET) ? new WindowPolicy(algorithm, limit, window, limit)
				: new WindowPolicy(algorithm, limit, window);
	}

	/** A partner's 1d/100,000 override with 20,000 used ends at 10:30 into the plan's 1h/1,000. */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void anOverrideOfADayEndingIntoAnHourlyPlanRefusesAtMostUntilTheHourEnds(Algorithm algorithm) {
		WindowPolicy override = limit(algorithm, 100_000, Duration.ofDays(1));
		WindowPolicy plan = limit(algorithm, 1_000, Duration.ofHours(1));
		assertThat(decide(override, 20_000, T0 + 10 * HOUR).allowed()).isTrue();
		Decision first = decide(plan, 1, T0 + 10 * HOUR + HOUR / 2);
		long refusedUntil = first.allowed() ? 0 : first.retryAfterMillis();
		switch (algorithm) {
			// the 20,000 are this hour's: refused until 11:00, not midnight
			case FIXED_WINDOW -> assertThat(first).isEqualTo(new Decision(false, 0, HOUR / 2, HOUR / 2));
			// the 20,000 are this hour's, as 1,000: refused until 11:00 and the next 3.6 s (1,000 of the
			// previous hour weigh (60 - e)/60; one more fits at e = 3.6 s)
			case SLIDING_WINDOW_COUNTER -> assertThat(first).isEqualTo(new Decision(false, 0, HOUR / 2 + 3_600, HOUR / 2 + 3_600));
			// all 20,000 were made at 10:00, within the last hour: they leave at 11:00
			case SLIDING_LOG, SLIDING_LOG_SORTED_SET ->
				assertThat(first).isEqualTo(new Decision(false, 0, HOUR / 2, HOUR / 2));
			// an empty bucket of the plan: one request per 3.6 s comes back at once
			case TOKEN_BUCKET -> assertThat(first).isEqualTo(new Decision(false, 0, 3_600, 3_600));
		}
		assertThat(refusedUntil).isLessThanOrEqualTo(HOUR);
		assertThat(decide(plan, 1, T0 + 10 * HOUR + HOUR / 2 + refusedUntil).allowed()).isTrue();
	}

	/** A client used up 1000/1d; an override of 100/1m meant to unlock it does, within a minute. */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void anUnlockOverrideOfAMinuteAllowsWithinAMinute(Algorithm algorithm) {
		WindowPolicy daily = limit(algorithm, 1_000, Duration.ofDays(1));
		WindowPolicy unlock = limit(algorithm, 100, Duration.ofMinutes(1));
		assertThat(decide(daily, 1_000, T0 + 10 * HOUR).allowed()).isTrue();
		assertThat(decide(daily, 1, T0 + 10 * HOUR + 1_000).allowed()).isFalse();
		long now = T0 + 10 * HOUR + 30_000;
		Decision first = decide(unlock, 1, now);
		long wait = first.allowed() ? 0 : first.retryAfterMillis();
		assertThat(wait).as("%s", algorithm).isLessThanOrEqualTo(60_000);
		if (wait > 0) {
			assertThat(decide(unlock, 1, now + wait - 1).allowed()).isFalse();
		}
		assertThat(decide(unlock, 1, now + wait).allowed()).isTrue();
		// and no fresh quota: what was used stays used until the unlock's window lets it go
		assertThat(wait).as("%s", algorithm).isPositive();
	}

	@Test
	void aTokenBucketDowngradeWaitsAtMostTheNewBucketsRefill() {
		// 100k a day, burst 100k, 50k used in an hour; then 1000 an hour, burst 1000
		WindowPolicy large = new WindowPolicy(Algorithm.TOKEN_BUCKET, 100_000, Duration.ofDays(1), 100_000);
		WindowPolicy small = new WindowPolicy(Algorithm.TOKEN_BUCKET, 1_000, Duration.ofHours(1), 1_000);
		assertThat(decide(large, 50_000, T0).allowed()).isTrue();
		// the stored TAT is T0 + 12 h; read as at most an empty small bucket: one back every 3.6 s
		assertThat(decide(small, 1, T0 + HOUR)).isEqualTo(new Decision(false, 0, 3_600, 3_600));
		assertThat(decide(small, 1, T0 + HOUR + 3_600).allowed()).isTrue();
		// the whole burst is back an hour later, not ten
		assertThat(decide(small, 1_000, T0 + 2 * HOUR + 3_600)).isEqualTo(new Decision(true, 0, HOUR, 0));
	}

	@Test
	void aTokenBucketUpgradeKeepsTheDebtOwed() {
		WindowPolicy tenPerMinute = new WindowPolicy(Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(1));
		WindowPolicy perHour = new WindowPolicy(Algorithm.TOKEN_BUCKET, 1_000, Duration.ofHours(1));
		assertThat(burst(tenPerMinute, T0, 10)).isEqualTo(10);
		// the 60 s owed are 16.7 requests of 3.6 s: 982 of 1000 left after this one
		assertThat(decide(perHour, 1, T0 + 1_000)).isEqualTo(new Decision(true, 982, 63_600 - 1_000, 0));
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aLongerWindowWithALargerLimitKeepsWhatWasUsed(Algorithm algorithm) {
		// 4 of 10 an hour used at 00:10; at 00:20 the client gets 20 a day
		WindowPolicy hourly = limit(algorithm, 10, Duration.ofHours(1));
		WindowPolicy daily = limit(algorithm, 20, Duration.ofDays(1));
		assertThat(decide(hourly, 4, T0 + 600_000).allowed()).isTrue();
		long now = T0 + 1_200_000;
		int allowed = burst(daily, now, 30);
		switch (algorithm) {
			// the 4 are this day's: 16 more
			case FIXED_WINDOW, SLIDING_LOG, SLIDING_LOG_SORTED_SET, SLIDING_WINDOW_COUNTER ->
				assertThat(allowed).isEqualTo(16);
			// the bucket keeps time, not requests: the 4 left it 14 min from full at 00:20, less than one of
			// the day's 72 min intervals: 19 more
			case TOKEN_BUCKET -> assertThat(allowed).isEqualTo(19);
		}
		if (algorithm == Algorithm.FIXED_WINDOW) {
			// the day's window now, not the hour's: still refused after the hour ends
			assertThat(decide(daily, 1, T0 + 2 * HOUR).allowed()).isFalse();
			assertThat(decide(daily, 1, T0 + DAY).allowed()).isTrue();
		}
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aShorterWindowWithASmallerLimitRefusesAtMostUntilItsWindowEnds(Algorithm algorithm) {
		// 40 of 50 an hour used at 00:05; at 00:30 the client gets 10 a minute
		WindowPolicy hourly = limit(algorithm, 50, Duration.ofHours(1));
		WindowPolicy minute = limit(algorithm, 10, Duration.ofMinutes(1));
		assertThat(decide(hourly, 40, T0 + 300_000).allowed()).isTrue();
		long now = T0 + 1_800_000 + 20_000;
		Decision first = decide(minute, 1, now);
		switch (algorithm) {
			// used in this minute: refused until it ends, then a minute's 10
			case FIXED_WINDOW -> assertThat(first).isEqualTo(new Decision(false, 0, 40_000, 40_000));
			// 10 of them in this minute, fading over the next: one more fits 6 s into it
			case SLIDING_WINDOW_COUNTER -> assertThat(first).isEqualTo(new Decision(false, 0, 46_000, 46_000));
			// made 25 min ago: out of the minute's window
			case SLIDING_LOG, SLIDING_LOG_SORTED_SET -> assertThat(first.allowed()).isTrue();
			// 40 owe 48 min at 72 s each: read as an empty bucket of 10 a minute, one back in 6 s
			case TOKEN_BUCKET -> assertThat(first).isEqualTo(new Decision(false, 0, 6_000, 6_000));
		}
		assertThat(burst(minute, now + 120_000, 20)).isEqualTo(10);
	}

}
