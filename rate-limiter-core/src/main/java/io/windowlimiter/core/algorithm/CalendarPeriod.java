package io.windowlimiter.core.algorithm;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.Locale;

/**
 * A calendar quota's period: a local day, week or month in a time zone. Its edges are local midnights,
 * the week's first day or the month's first, whatever they are in UTC: a day of a daylight-saving change
 * lasts 23 or 25 hours, a month 28 to 31 days. Zone rules live here, in Java (Redis has none); the
 * decision script gets the edges around this instance's now ({@link #edges}) and picks the period holding
 * Redis's now among them.
 *
 * @param unit day, week or month
 * @param zone the zone whose local dates count
 * @param weekStart the first day of a week (for weeks; Monday otherwise)
 */
public record CalendarPeriod(Unit unit, ZoneId zone, DayOfWeek weekStart) {

	/** A period's length as configured; its real length follows the calendar. */
	public enum Unit {

		DAY(Duration.ofDays(1)), WEEK(Duration.ofDays(7)), MONTH(Duration.ofDays(31));

		private final Duration longest;

		Unit(Duration longest) {
			this.longest = longest;
		}

		/** The name used in route configuration, e.g. {@code month}. */
		public String id() {
			return name().toLowerCase(Locale.ROOT);
		}

		/**
		 * The nominal length: a day, a week, 31 days (the longest month). It stands for the window where one
		 * length is asked for (the policy header's {@code w}, the local limiter of fail-mode local).
		 */
		public Duration nominal() {
			return this.longest;
		}

	}

	/** The first date of the period holding {@code date}. */
	public LocalDate startOf(LocalDate date) {
		return switch (this.unit) {
			case DAY -> date;
			case WEEK -> date.with(TemporalAdjusters.previousOrSame(this.weekStart));
			case MONTH -> date.withDayOfMonth(1);
		};
	}

	private LocalDate plus(LocalDate start, int periods) {
		return switch (this.unit) {
			case DAY -> start.plusDays(periods);
			case WEEK -> start.plusWeeks(periods);
			case MONTH -> start.plusMonths(periods);
		};
	}

	/** When the local date begins: its midnight, or the first instant after it when a change skips it. */
	private long at(LocalDate date) {
		return date.atStartOfDay(this.zone).toInstant().toEpochMilli();
	}

	/**
	 * The edges around {@code nowMillis}, in ms since the epoch: the previous period's start, the current
	 * period's start and end, the next period's end. Three periods, so that the script finds the one holding
	 * Redis's now while the two clocks differ by up to a period either way.
	 */
	public long[] edges(long nowMillis) {
		LocalDate start = startOf(Instant.ofEpochMilli(nowMillis).atZone(this.zone).toLocalDate());
		return new long[] { at(plus(start, -1)), at(start), at(plus(start, 1)), at(plus(start, 2)) };
	}

	/** The script's extra argument: {@link #edges} comma separated. */
	public String extra(long nowMillis) {
		long[] edges = edges(nowMillis);
		return edges[0] + "," + edges[1] + "," + edges[2] + "," + edges[3];
	}

	/** E.g. {@code month in Europe/Berlin}, or {@code week from sunday in UTC}. */
	@Override
	public String toString() {
		String from = (this.unit == Unit.WEEK) ? " from " + this.weekStart.name().toLowerCase(Locale.ROOT) : "";
		return this.unit.id() + from + " in " + this.zone.getId();
	}

}
