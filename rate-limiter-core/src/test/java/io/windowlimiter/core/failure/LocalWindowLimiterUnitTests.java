package io.windowlimiter.core.failure;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.CalendarPeriod;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.Verdict;
import io.windowlimiter.core.algorithm.WindowPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LocalWindowLimiterUnitTests {

	private static final long T0 = 1_767_225_600_000L;

	@Test
	void decidesAsTheSlidingWindowCounterDoes() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		for (int i = 0; i < 10; i++) {
			assertThat(local.decide("k", 10, Duration.ofMinutes(1), 1, T0 + 30_000).allowed()).isTrue();
		}
		// 15 s into the next window: 10 * 45/60 = 7.5 taken, 2 more fit
		assertThat(local.decide("k", 10, Duration.ofMinutes(1), 1, T0 + 75_000).allowed()).isTrue();
		assertThat(local.decide("k", 10, Duration.ofMinutes(1), 1, T0 + 75_000).allowed()).isTrue();
		Decision denied = local.decide("k", 10, Duration.ofMinutes(1), 1, T0 + 75_000);
		assertThat(denied.allowed()).isFalse();
		// previous 10, current 2: the next needs 10 * (60 - e)/60 + 3 <= 10, so e >= 18 s
		assertThat(denied.retryAfterMillis()).isEqualTo(3_000);
	}

	@Test
	void memoryStaysBoundedWhateverTheNumberOfClients() {
		LocalWindowLimiter local = new LocalWindowLimiter(100);
		for (int i = 0; i < 10_000; i++) {
			local.decide("client-" + i, 5, Duration.ofMinutes(1), 1, T0);
		}
		assertThat(local.size()).isLessThanOrEqualTo(100);
	}

	@Test
	void aRequestRefusedByOneLimitIsCountedByNone() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		List<String> keys = List.of("wide", "narrow");
		List<WindowPolicy> limits = List.of(policy(10), policy(2));
		for (int i = 0; i < 5; i++) {
			local.decideAll(keys, limits, 1, T0);
		}
		// 2 allowed, 3 refused by the narrow limit: the wide one counted only the 2
		assertThat(local.decide("wide", 10, Duration.ofMinutes(1), 0, T0).remaining()).isEqualTo(8);
		assertThat(local.decideAll(keys, limits, 1, T0).reported()).isEqualTo(1);
	}

	@Test
	void aRefusalReportsTheLimitThatMakesTheClientWaitLongest() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		List<String> keys = List.of("minute", "day");
		List<WindowPolicy> limits = List.of(policy(1), calendar(1, CalendarPeriod.Unit.DAY, "UTC"));
		assertThat(local.decideAll(keys, limits, 1, T0).allowed()).isTrue();
		Verdict refused = local.decideAll(keys, limits, 1, T0 + 1_000);
		assertThat(refused.denying()).containsExactly(0, 1);
		// both refuse: the day's end, not the minute's, is when the client may come back
		assertThat(refused.reported()).isEqualTo(1);
		assertThat(refused.reportedDecision().retryAfterMillis()).isEqualTo(86_400_000 - 1_000);
	}

	@Test
	void aPenaltyBlocksForItsBlockForAndChargesNothingMeanwhile() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		List<String> keys = List.of("minute", "day");
		List<WindowPolicy> limits = List.of(policy(2), calendar(10, CalendarPeriod.Unit.DAY, "UTC"));
		LocalWindowLimiter.Penalty penalty = new LocalWindowLimiter.Penalty("block", List.of(600_000L, 0L));
		for (int i = 0; i < 2; i++) {
			assertThat(local.decideAll(keys, limits, penalty, 1, T0).allowed()).isTrue();
		}
		Verdict refused = local.decideAll(keys, limits, penalty, 1, T0);
		assertThat(refused.blockedMillis()).isEqualTo(600_000);
		assertThat(refused.reportedDecision().retryAfterMillis()).isEqualTo(600_000);
		// five minutes on, the minute's window is long over: still blocked, by the minute's limit
		for (int i = 0; i < 5; i++) {
			Verdict blocked = local.decideAll(keys, limits, penalty, 1, T0 + 300_000);
			assertThat(blocked.allowed()).isFalse();
			assertThat(blocked.reported()).isZero();
			assertThat(blocked.reportedDecision().retryAfterMillis()).isEqualTo(300_000);
		}
		// the blocked requests were charged nothing: the day counted the 2 allowed, and now this one
		Verdict after = local.decideAll(keys, limits, penalty, 1, T0 + 600_000);
		assertThat(after.allowed()).isTrue();
		assertThat(after.decisions().get(1).remaining()).isEqualTo(7);
	}

	@Test
	void aKiritimatiMonthEndsAtItsLocalMidnightAndSaysSo() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		WindowPolicy perMonth = calendar(3, CalendarPeriod.Unit.MONTH, "Pacific/Kiritimati");
		// UTC+14: July 1st 00:00 local is June 30th 10:00Z; the three are spent a minute before it
		long end = at("2026-06-30T10:00:00Z");
		for (int i = 0; i < 3; i++) {
			assertThat(decide(local, perMonth, end - 60_000).allowed()).isTrue();
		}
		Decision denied = decide(local, perMonth, end - 60_000);
		assertThat(denied).isEqualTo(new Decision(false, 0, 60_000, 60_000));
		assertThat(decide(local, perMonth, end - 1).retryAfterMillis()).isEqualTo(1);
		// July starts at zero and lasts 31 local days
		Decision july = decide(local, perMonth, end);
		assertThat(july.allowed()).isTrue();
		assertThat(july.remaining()).isEqualTo(2);
		assertThat(july.resetMillis()).isEqualTo(at("2026-07-31T10:00:00Z") - end);
	}

	@Test
	void aBerlinDayOf23HoursInMarchResetsAtLocalMidnight() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		WindowPolicy perDay = calendar(2, CalendarPeriod.Unit.DAY, "Europe/Berlin");
		// 2026-03-29, the last Sunday of March: 00:30 CET is 23:30Z the day before; the day ends at 22:00Z
		long morning = at("2026-03-28T23:30:00Z");
		long end = at("2026-03-29T22:00:00Z");
		assertThat(decide(local, perDay, morning).allowed()).isTrue();
		Decision second = decide(local, perDay, morning);
		assertThat(second.resetMillis()).isEqualTo(end - morning);
		assertThat(decide(local, perDay, morning).retryAfterMillis()).isEqualTo(end - morning);
		// 23 hours after the day began, not 24, nor a sliding window's gradual release
		assertThat(decide(local, perDay, end - 1).allowed()).isFalse();
		Decision monday = decide(local, perDay, end);
		assertThat(monday.allowed()).isTrue();
		assertThat(monday.resetMillis()).isEqualTo(Duration.ofHours(24).toMillis());
	}

	@Test
	void aBerlinDayOf25HoursInOctoberHoldsItsQuotaForAllOfThem() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		WindowPolicy perDay = calendar(1, CalendarPeriod.Unit.DAY, "Europe/Berlin");
		// 2026-10-25, the last Sunday of October: it begins at 22:00Z (CEST) and ends at 23:00Z the next day (CET)
		long start = at("2026-10-24T22:00:00Z");
		assertThat(decide(local, perDay, start).allowed()).isTrue();
		// 24 hours on it is 23:00 local, the same day: still refused, until its end an hour later
		Decision late = decide(local, perDay, start + Duration.ofHours(24).toMillis());
		assertThat(late.allowed()).isFalse();
		assertThat(late.retryAfterMillis()).isEqualTo(Duration.ofHours(1).toMillis());
		assertThat(decide(local, perDay, start + Duration.ofHours(25).toMillis()).allowed()).isTrue();
	}

	@Test
	void calendarCountsStayBoundedAcrossClientsAndPeriods() {
		LocalWindowLimiter local = new LocalWindowLimiter(100);
		WindowPolicy perDay = calendar(5, CalendarPeriod.Unit.DAY, "Pacific/Kiritimati");
		for (int day = 0; day < 30; day++) {
			for (int i = 0; i < 1_000; i++) {
				local.decideAll(List.of("client-" + i), List.of(perDay), 1, T0 + day * 86_400_000L);
			}
		}
		assertThat(local.size()).isLessThanOrEqualTo(100);
	}

	private static Decision decide(LocalWindowLimiter local, WindowPolicy policy, long now) {
		return local.decideAll(List.of("k"), List.of(policy), 1, now).reportedDecision();
	}

	private static WindowPolicy calendar(long limit, CalendarPeriod.Unit unit, String zone) {
		return WindowPolicy.calendar(limit, new CalendarPeriod(unit, ZoneId.of(zone), DayOfWeek.MONDAY));
	}

	private static long at(String instant) {
		return Instant.parse(instant).toEpochMilli();
	}

	@Test
	void aConcurrencyLimitCountsThisInstancesRequestsInFlightUntilReleased() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		List<String> keys = List.of("rate", "slots");
		List<WindowPolicy> limits = List.of(policy(10),
				new WindowPolicy(Algorithm.CONCURRENCY, 2, Duration.ofMinutes(10)));
		assertThat(local.decideAll(keys, limits, 1, T0).reportedDecision()).isEqualTo(new Decision(true, 1, 600_000, 0));
		assertThat(local.decideAll(keys, limits, 1, T0).reportedDecision().allowed()).isTrue();
		Verdict refused = local.decideAll(keys, limits, 1, T0);
		assertThat(refused.reported()).isEqualTo(1);
		assertThat(refused.reportedDecision()).isEqualTo(new Decision(false, 0, 600_000, 1_000));
		// the rate counted the two that passed only
		assertThat(local.decide("rate", 10, Duration.ofMinutes(1), 0, T0).remaining()).isEqualTo(8);
		local.release(List.of("slots"));
		assertThat(local.decideAll(keys, limits, 1, T0).reportedDecision().allowed()).isTrue();
		local.release(List.of("slots"));
		local.release(List.of("slots"));
		// releasing more than was taken never goes below none in flight
		local.release(List.of("slots"));
		assertThat(local.decideAll(keys, limits, 1, T0).reportedDecision()).isEqualTo(new Decision(true, 1, 600_000, 0));
	}

	private static WindowPolicy policy(long limit) {
		return new WindowPolicy(Algorithm.SLIDING_WINDOW_COUNTER, limit, Duration.ofMinutes(1));
	}

}
