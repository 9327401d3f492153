package io.windowlimiter.core.algorithm;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Calendar quotas through the real script on Redis, with an explicit clock: Java works out the edges
 * around one now (here the same as Redis's, or another to stand for a skewed gateway), the script picks
 * the period holding its own now.
 */
class CalendarTests extends ScriptTestSupport {

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

	private static CalendarPeriod period(CalendarPeriod.Unit unit, ZoneId zone) {
		return new CalendarPeriod(unit, zone, DayOfWeek.MONDAY);
	}

	private static long at(String instant) {
		return Instant.parse(instant).toEpochMilli();
	}

	/** One request at Redis time {@code now}, the gateway's edges worked out around {@code gatewayNow}. */
	private Decision decide(WindowPolicy policy, long now, long gatewayNow, long cost) {
		LimitScript.Arguments arguments = LimitScript.arguments(List.of(policy), cost, Long.toString(now), gatewayNow, 0);
		return this.script.decide(List.of(this.key), arguments).block(TIMEOUT).decisions().get(0);
	}

	@Test
	void edgesFollowTheZonesDaylightSavingChanges() {
		CalendarPeriod berlinDay = period(CalendarPeriod.Unit.DAY, BERLIN);
		// 2026-03-29: clocks go from 02:00 to 03:00 in Berlin, a day of 23 hours
		long[] spring = berlinDay.edges(at("2026-03-29T12:00:00Z"));
		assertThat(spring[1]).isEqualTo(at("2026-03-28T23:00:00Z"));
		assertThat(spring[2] - spring[1]).isEqualTo(Duration.ofHours(23).toMillis());
		// 2026-10-25: back from 03:00 to 02:00, 25 hours
		long[] autumn = berlinDay.edges(at("2026-10-25T12:00:00Z"));
		assertThat(autumn[2] - autumn[1]).isEqualTo(Duration.ofHours(25).toMillis());
		assertThat(autumn[2]).isEqualTo(at("2026-10-25T23:00:00Z"));
		// New York, 2026-03-08 (23 h) and 2026-11-01 (25 h)
		CalendarPeriod nyDay = period(CalendarPeriod.Unit.DAY, NEW_YORK);
		long[] nySpring = nyDay.edges(at("2026-03-08T15:00:00Z"));
		assertThat(nySpring[1]).isEqualTo(at("2026-03-08T05:00:00Z"));
		assertThat(nySpring[2]).isEqualTo(at("2026-03-09T04:00:00Z"));
		long[] nyAutumn = nyDay.edges(at("2026-11-01T15:00:00Z"));
		assertThat(nyAutumn[2] - nyAutumn[1]).isEqualTo(Duration.ofHours(25).toMillis());
	}

	@Test
	void aBerlinDayOf23HoursResetsAtLocalMidnightAndSaysSo() {
		WindowPolicy perDay = WindowPolicy.calendar(3, period(CalendarPeriod.Unit.DAY, BERLIN));
		// 2026-03-29T00:30 local (CET) = 2026-03-28T23:30Z; the day ends at 2026-03-29T22:00Z (midnight CEST)
		long morning = at("2026-03-28T23:30:00Z");
		assertThat(burst(perDay, morning, 4)).isEqualTo(3);
		Decision denied = decide(perDay, morning + 1_000);
		long end = at("2026-03-29T22:00:00Z");
		assertThat(denied).isEqualTo(new Decision(false, 0, end - morning - 1_000, end - morning - 1_000));
		// 23 hours after the day began, not 24
		assertThat(decide(perDay, end - 1).allowed()).isFalse();
		Decision next = decide(perDay, end);
		assertThat(next.allowed()).isTrue();
		assertThat(next.remaining()).isEqualTo(2);
		assertThat(next.resetMillis()).isEqualTo(Duration.ofHours(24).toMillis());
	}

	@Test
	void aNewYorkDayOf25HoursHoldsItsQuotaForAllOfThem() {
		WindowPolicy perDay = WindowPolicy.calendar(2, period(CalendarPeriod.Unit.DAY, NEW_YORK));
		long start = at("2026-11-01T04:00:00Z");
		assertThat(burst(perDay, start, 3)).isEqualTo(2);
		// 24 hours later it is 23:00 local, still the same day
		assertThat(decide(perDay, start + Duration.ofHours(24).toMillis()).allowed()).isFalse();
		assertThat(decide(perDay, start + Duration.ofHours(25).toMillis() - 1).retryAfterMillis()).isEqualTo(1);
		assertThat(decide(perDay, start + Duration.ofHours(25).toMillis()).allowed()).isTrue();
	}

	@Test
	void kiritimatiAtUtcPlus14StartsItsDayTheUtcDayBefore() {
		WindowPolicy perDay = WindowPolicy.calendar(1, period(CalendarPeriod.Unit.DAY, ZoneId.of("Pacific/Kiritimati")));
		// 2026-06-15T00:00 local = 2026-06-14T10:00Z
		long midnight = at("2026-06-14T10:00:00Z");
		// not at midnight - 1 ms: the key's expiry (PX, real time) would then be 1 ms and could pass between calls
		assertThat(decide(perDay, midnight - 60_000).allowed()).isTrue();
		assertThat(decide(perDay, midnight - 60_000).allowed()).isFalse();
		Decision fresh = decide(perDay, midnight);
		assertThat(fresh.allowed()).isTrue();
		assertThat(fresh.resetMillis()).isEqualTo(Duration.ofDays(1).toMillis());
	}

	@Test
	void monthsEndOnTheirLastDayLeapDaysIncluded() {
		WindowPolicy perMonth = WindowPolicy.calendar(1, period(CalendarPeriod.Unit.MONTH, ZoneId.of("UTC")));
		// January 31st -> February 1st
		assertThat(decide(perMonth, at("2026-01-31T23:59:00Z")).allowed()).isTrue();
		assertThat(decide(perMonth, at("2026-01-31T23:59:59.999Z")).allowed()).isFalse();
		Decision february = decide(perMonth, at("2026-02-01T00:00:00Z"));
		assertThat(february.allowed()).isTrue();
		// February 2026 has 28 days
		assertThat(february.resetMillis()).isEqualTo(Duration.ofDays(28).toMillis());
		assertThat(decide(perMonth, at("2026-02-28T23:00:00Z")).retryAfterMillis()).isEqualTo(3_600_000);
		assertThat(decide(perMonth, at("2026-03-01T00:00:00Z")).allowed()).isTrue();
		// 2028 is a leap year: the 29th of February belongs to February, which lasts 29 days
		WindowPolicy leap = WindowPolicy.calendar(1, period(CalendarPeriod.Unit.MONTH, BERLIN));
		this.redis.delete(this.key).block(TIMEOUT);
		Decision leapDay = decide(leap, at("2028-02-29T12:00:00Z"));
		assertThat(leapDay.allowed()).isTrue();
		// March 1st 00:00 in Berlin (CET) is February 29th 23:00Z
		assertThat(leapDay.resetMillis()).isEqualTo(at("2028-02-29T23:00:00Z") - at("2028-02-29T12:00:00Z"));
		assertThat(period(CalendarPeriod.Unit.MONTH, BERLIN).edges(at("2028-02-10T00:00:00Z"))[2]
				- period(CalendarPeriod.Unit.MONTH, BERLIN).edges(at("2028-02-10T00:00:00Z"))[1])
			.isEqualTo(Duration.ofDays(29).toMillis());
		assertThat(decide(leap, at("2028-02-29T22:59:59.999Z")).allowed()).isFalse();
		assertThat(decide(leap, at("2028-02-29T23:00:00Z")).allowed()).isTrue();
	}

	@Test
	void weeksStartOnTheConfiguredDay() {
		// 2026-12-06 is a Sunday
		WindowPolicy fromMonday = WindowPolicy.calendar(1, period(CalendarPeriod.Unit.WEEK, ZoneId.of("UTC")));
		assertThat(decide(fromMonday, at("2026-12-06T12:00:00Z")).allowed()).isTrue();
		assertThat(decide(fromMonday, at("2026-12-06T23:59:00Z")).allowed()).isFalse();
		assertThat(decide(fromMonday, at("2026-12-07T00:00:00Z")).resetMillis())
			.isEqualTo(Duration.ofDays(7).toMillis());
		this.redis.delete(this.key).block(TIMEOUT);
		WindowPolicy fromSunday = WindowPolicy
			.calendar(1, new CalendarPeriod(CalendarPeriod.Unit.WEEK, ZoneId.of("UTC"), DayOfWeek.SUNDAY));
		assertThat(decide(fromSunday, at("2026-12-05T23:00:00Z")).allowed()).isTrue();
		Decision sunday = decide(fromSunday, at("2026-12-06T00:00:00Z"));
		assertThat(sunday.allowed()).isTrue();
		assertThat(sunday.resetMillis()).isEqualTo(Duration.ofDays(7).toMillis());
	}

	@Test
	void theRedisClockPicksThePeriodWhateverTheGatewaysClockSays() {
		WindowPolicy perDay = WindowPolicy.calendar(1, period(CalendarPeriod.Unit.DAY, BERLIN));
		long midnight = at("2026-07-01T22:00:00Z");
		// the gateway is still on the day before (its clock 2 minutes behind): Redis's new day counts
		assertThat(decide(perDay, midnight + 60_000, midnight - 60_000, 1).allowed()).isTrue();
		assertThat(decide(perDay, midnight + 61_000, midnight - 60_000, 1).allowed()).isFalse();
		// another gateway is a day ahead: the same period still counts, Redis is on it
		assertThat(decide(perDay, midnight + 62_000, midnight + Duration.ofHours(23).toMillis(), 1).allowed())
			.isFalse();
		assertThat(decide(perDay, midnight + 62_000, midnight + Duration.ofHours(23).toMillis(), 1).resetMillis())
			.isEqualTo(Duration.ofDays(1).toMillis() - 62_000);
	}

	@Test
	void aRedisClockSteppingBackAcrossTheEdgeKeepsCountingInTheNewPeriod() {
		WindowPolicy perDay = WindowPolicy.calendar(2, period(CalendarPeriod.Unit.DAY, NEW_YORK));
		long midnight = at("2026-07-02T04:00:00Z");
		assertThat(burst(perDay, midnight + 1_000, 2)).isEqualTo(2);
		// the clock steps back 5 s across midnight (a failover to a lagging replica): still the new day's count
		Decision back = decide(perDay, midnight - 4_000);
		assertThat(back.allowed()).isFalse();
		assertThat(back.retryAfterMillis()).isEqualTo(Duration.ofDays(1).toMillis() + 4_000);
	}

	@Test
	void aRollingWindowChangedToACalendarQuotaKeepsWhatWasUsed() {
		WindowPolicy rolling = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		long now = at("2026-07-01T10:30:00Z");
		assertThat(burst(rolling, now, 7)).isEqualTo(7);
		// the same key: the client's 7 stay used in the calendar day
		WindowPolicy perDay = WindowPolicy.calendar(10, period(CalendarPeriod.Unit.DAY, BERLIN));
		assertThat(burst(perDay, now + 1_000, 5)).isEqualTo(3);
		// the day first; the rolling hour kept after it while it lasts, with the same 10, for when it comes back
		assertThat(stored()).isEqualTo("c:" + at("2026-06-30T22:00:00Z") + ":" + at("2026-07-01T22:00:00Z") + ":10;"
				+ ((now - Y2025) / 3_600_000) + "36" + "10" + "252");
		// a lower calendar limit: at most the limit is carried, so the client waits for the day's end, no more
		this.redis.delete(this.key).block(TIMEOUT);
		burst(rolling, now, 7);
		Decision tighter = decide(WindowPolicy.calendar(5, period(CalendarPeriod.Unit.DAY, BERLIN)), now + 1_000);
		assertThat(tighter.allowed()).isFalse();
		assertThat(tighter.retryAfterMillis()).isEqualTo(at("2026-07-01T22:00:00Z") - now - 1_000);
		// a rolling window that ended before the day began carries nothing
		this.redis.delete(this.key).block(TIMEOUT);
		burst(rolling, at("2026-06-30T21:30:00Z"), 7);
		assertThat(decide(perDay, at("2026-06-30T22:00:00Z")).remaining()).isEqualTo(9);
	}

	@Test
	void aCalendarQuotaChangedToARollingWindowOrAnotherZoneKeepsWhatWasUsed() {
		WindowPolicy perDay = WindowPolicy.calendar(10, period(CalendarPeriod.Unit.DAY, BERLIN));
		long now = at("2026-07-01T10:30:00Z");
		burst(perDay, now, 6);
		WindowPolicy rolling = policy(Algorithm.FIXED_WINDOW, 8, Duration.ofHours(1));
		assertThat(burst(rolling, now + 1_000, 5)).isEqualTo(2);
		this.redis.delete(this.key).block(TIMEOUT);
		burst(perDay, now, 6);
		WindowPolicy newYork = WindowPolicy.calendar(10, period(CalendarPeriod.Unit.DAY, NEW_YORK));
		assertThat(burst(newYork, now + 1_000, 5)).isEqualTo(4);
		assertThat(decide(newYork, now + 2_000).retryAfterMillis())
			.isEqualTo(at("2026-07-02T04:00:00Z") - now - 2_000);
	}

	@Test
	void theKeyExpiresWhenThePeriodEnds() {
		WindowPolicy perMonth = WindowPolicy.calendar(5, period(CalendarPeriod.Unit.MONTH, BERLIN));
		long now = System.currentTimeMillis();
		Decision first = decide(perMonth, now);
		assertThat(first.allowed()).isTrue();
		assertThat(pttl()).isBetween(first.resetMillis() - 5_000, first.resetMillis());
	}

}
