package io.windowlimiter.core.algorithm;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An operator's change of window (an override of an hour on a route of a day, then cleared) with what the
 * client used in place: a peek writes nothing, and what the client used before and during the override is
 * still used when the route's own window comes back. Issue 44, attack round 2 finding 2(a), on the scripts
 * with an explicit clock.
 */
class PolicyChangeKeepsUseTests extends ScriptTestSupport {

	private static final long HOUR = 3_600_000;

	private static final long DAY = 24 * HOUR;

	private Decision decide(WindowPolicy policy, long cost, long now) {
		return this.script.decideOne(this.key, policy, cost, Long.toString(now)).block(TIMEOUT);
	}

	private static WindowPolicy limit(Algorithm algorithm, long limit, Duration window) {
		return (algorithm == Algorithm.TOKEN_BUCKET) ? new WindowPolicy(algorithm, limit, window, limit)
				: new WindowPolicy(algorithm, limit, window);
	}

	/** The key's value whatever its type (the sorted-set log's is no string), in hex. */
	private String dump() {
		return this.redis.execute(RedisScript.of("local d = redis.call('DUMP', KEYS[1]) return (string.gsub(d, '.', "
				+ "function(c) return string.format('%02x', string.byte(c)) end))", String.class), List.of(this.key))
			.blockFirst(TIMEOUT);
	}

	/** The attack's read: GET /actuator/ratelimits/{route}/{key} under an override of another window. */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aPeekUnderAnotherWindowWritesNothing(Algorithm algorithm) {
		// the attack's 18,072 of 20,000 a day and 1,000 an hour, scaled down for the sorted-set log
		WindowPolicy day = limit(algorithm, 200, Duration.ofDays(1));
		WindowPolicy hour = limit(algorithm, 10, Duration.ofHours(1));
		assertThat(decide(day, 181, T0 + 2 * HOUR).allowed()).isTrue();
		String before = dump();
		long ttl = pttl();
		Decision peek = decide(hour, 0, T0 + 2 * HOUR + 1_000);
		assertThat(peek.remaining()).isZero();
		assertThat(dump()).as("%s", algorithm).isEqualTo(before);
		assertThat(pttl()).as("%s", algorithm).isBetween(ttl - 2_000, ttl);
	}

	/**
	 * 18,072 of 20,000 a day used by 02:00; an override of 1,000 an hour from 03:47; one refused call; 500 used
	 * in the next hour under it; cleared at 05:00: 20,000 - 18,072 - 500 = 1,428 left, until midnight.
	 */
	@Test
	void aFixedWindowOverrideOfAnHourOnADayKeepsTheDaysUse() {
		WindowPolicy day = limit(Algorithm.FIXED_WINDOW, 20_000, Duration.ofDays(1));
		WindowPolicy hour = limit(Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));
		assertThat(decide(day, 18_072, T0 + 2 * HOUR).allowed()).isTrue();
		long at = T0 + 3 * HOUR + 47 * 60_000;
		// the day's use is this hour's, as much as the override allows: refused until 04:00, not midnight
		assertThat(decide(hour, 1, at)).isEqualTo(new Decision(false, 0, 13 * 60_000, 13 * 60_000));
		// the key lasts as long as the day's use matters
		assertThat(pttl()).isGreaterThan(DAY - 3 * HOUR - 48 * 60_000);
		assertThat(decide(hour, 1, T0 + 4 * HOUR - 1).allowed()).isFalse();
		// the override's own hour: 1,000, of which the client uses 500
		assertThat(decide(hour, 500, T0 + 4 * HOUR).allowed()).isTrue();
		assertThat(pttl()).isGreaterThan(DAY - 4 * HOUR - 1_000);
		// cleared: the day's 18,572 used
		assertThat(decide(day, 1, T0 + 5 * HOUR)).isEqualTo(new Decision(true, 1_427, DAY - 5 * HOUR, 0));
		assertThat(decide(day, 1_428, T0 + 5 * HOUR).allowed()).isFalse();
		assertThat(decide(day, 1_427, T0 + 5 * HOUR).allowed()).isTrue();
		assertThat(decide(day, 1, T0 + DAY - 1).allowed()).isFalse();
		assertThat(decide(day, 20_000, T0 + DAY).allowed()).isTrue();
	}

	/** Without a clear, the override's hours go by: the day's use is still there at 23:00 under it and after it. */
	@Test
	void aFixedWindowOverrideOfAnHourDoesNotForgetTheDayWhenItsHoursEnd() {
		WindowPolicy day = limit(Algorithm.FIXED_WINDOW, 100, Duration.ofDays(1));
		WindowPolicy hour = limit(Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1));
		assertThat(decide(day, 12, T0 + HOUR).allowed()).isTrue();
		// a refused call, then each later hour gives the override's 5
		assertThat(decide(hour, 1, T0 + 2 * HOUR).allowed()).isFalse();
		assertThat(decide(hour, 5, T0 + 3 * HOUR).allowed()).isTrue();
		assertThat(decide(hour, 5, T0 + 23 * HOUR).allowed()).isTrue();
		assertThat(decide(hour, 1, T0 + 23 * HOUR).allowed()).isFalse();
		// cleared at 23:30: 12 + 10 used of the day's 100
		assertThat(decide(day, 1, T0 + 23 * HOUR + HOUR / 2)).isEqualTo(new Decision(true, 77, HOUR / 2, 0));
	}

	/** Back and forth between two windows: each counts what the other allowed while both lasted. */
	@Test
	void aFixedWindowGoingBackToTheShorterWindowKeepsItsCountToo() {
		WindowPolicy hour = limit(Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		WindowPolicy day = limit(Algorithm.FIXED_WINDOW, 1_000, Duration.ofDays(1));
		assertThat(decide(hour, 6, T0 + 60_000).allowed()).isTrue();
		// a day's override: the hour's 6 are the day's; 3 more
		assertThat(decide(day, 3, T0 + 120_000)).isEqualTo(new Decision(true, 991, DAY - 120_000, 0));
		// the override ends within the hour: 6 + 3 of its 10 used
		assertThat(decide(hour, 1, T0 + 180_000)).isEqualTo(new Decision(true, 0, HOUR - 180_000, 0));
		assertThat(decide(hour, 1, T0 + 180_000).allowed()).isFalse();
	}

	/** The attack's refused call, under a peek's eyes: a refusal after the change writes, and keeps the day. */
	@Test
	void aRefusedCallUnderAnotherWindowKeepsTheLongerWindowsExpiry() {
		WindowPolicy day = limit(Algorithm.FIXED_WINDOW, 20_000, Duration.ofDays(1));
		WindowPolicy hour = limit(Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));
		assertThat(decide(day, 18_072, T0 + HOUR).allowed()).isTrue();
		assertThat(decide(hour, 1, T0 + HOUR + HOUR / 2).allowed()).isFalse();
		assertThat(pttl()).isGreaterThan(DAY - 2 * HOUR);
		assertThat(decide(day, 0, T0 + HOUR + HOUR / 2).remaining()).isEqualTo(1_928);
	}

	/** A calendar day's use survives an hour's rolling override, as the rolling day's does. */
	@Test
	void aCalendarDayKeepsItsUseThroughARollingOverrideOfAnHour() {
		WindowPolicy calendarDay = WindowPolicy.calendar(100,
				new CalendarPeriod(CalendarPeriod.Unit.DAY, ZoneOffset.UTC, DayOfWeek.MONDAY));
		WindowPolicy hour = limit(Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1));
		assertThat(decide(calendarDay, 40, T0 + HOUR).allowed()).isTrue();
		assertThat(decide(hour, 1, T0 + 2 * HOUR).allowed()).isFalse();
		assertThat(decide(hour, 3, T0 + 3 * HOUR).allowed()).isTrue();
		assertThat(decide(calendarDay, 0, T0 + 4 * HOUR).remaining()).isEqualTo(57);
	}

}
