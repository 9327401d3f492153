package io.windowlimiter.core.policy;

import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.CalendarPeriod;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * Reads a limit's calendar quota ({@code calendar}, {@code time-zone}, {@code week-start}), its penalty
 * ({@code block-for}) and a route's {@code quota-status}, for {@link RouteArgs}, with its kind of messages:
 * property, what it was, what is allowed.
 */
final class CalendarArgs {

	/** The longest penalty: as long as the longest window. */
	static final Duration MAX_BLOCK = Duration.ofDays(366);

	/** Makes the exception for a property of the limit (or route) being read. */
	@FunctionalInterface
	interface Problem {

		InvalidRouteConfigurationException invalid(String property, String what, String allowed);

	}

	private CalendarArgs() {
	}

	/** The limit's calendar period, or null when it has none (then time-zone and week-start are refused). */
	static @Nullable CalendarPeriod period(Map<String, String> values, Problem problem) {
		String unitText = values.get("calendar");
		if (unitText == null) {
			for (String needsCalendar : List.of("time-zone", "week-start")) {
				if (values.containsKey(needsCalendar)) {
					throw problem.invalid(needsCalendar, "is set without calendar",
							"only with calendar: day, week or month (a calendar quota)");
				}
			}
			return null;
		}
		CalendarPeriod.Unit unit = Arrays.stream(CalendarPeriod.Unit.values())
			.filter(candidate -> candidate.id().equals(unitText))
			.findFirst()
			.orElseThrow(() -> problem.invalid("calendar", "is '" + unitText + "'", "one of "
					+ Arrays.stream(CalendarPeriod.Unit.values()).map(CalendarPeriod.Unit::id).collect(Collectors.joining(", "))));
		ZoneId zone = zone(values.getOrDefault("time-zone", "UTC"), problem);
		DayOfWeek weekStart = DayOfWeek.MONDAY;
		String weekText = values.get("week-start");
		if (weekText != null) {
			if (unit != CalendarPeriod.Unit.WEEK) {
				throw problem.invalid("week-start", "is '" + weekText + "' with calendar '" + unitText + "'",
						"only with calendar: week");
			}
			weekStart = Arrays.stream(DayOfWeek.values())
				.filter(day -> day.name().equalsIgnoreCase(weekText))
				.findFirst()
				.orElseThrow(() -> problem.invalid("week-start", "is '" + weekText + "'",
						"a day of the week: monday (the default), tuesday, ..., sunday"));
		}
		return new CalendarPeriod(unit, zone, weekStart);
	}

	private static ZoneId zone(String text, Problem problem) {
		try {
			ZoneId zone = ZoneId.of(text);
			// a fixed offset has no daylight saving: allowed, but only as written (UTC, +02:00)
			return (zone instanceof ZoneOffset offset && offset.getTotalSeconds() == 0) ? ZoneOffset.UTC : zone;
		}
		catch (DateTimeException ex) {
			throw problem.invalid("time-zone", "is '" + text + "'",
					"an IANA time-zone id such as Europe/Berlin, America/New_York or UTC (the default)");
		}
	}

	/** A calendar quota is a fixed window whose length the calendar gives: no window, burst or log-storage. */
	static void checkCalendar(Algorithm algorithm, Map<String, String> values, Problem problem) {
		if (algorithm != Algorithm.FIXED_WINDOW) {
			throw problem.invalid("calendar", "is set on a limit of algorithm '" + algorithm.id() + "'",
					"only with algorithm fixed-window (the default for a calendar quota)");
		}
		if (values.containsKey("window")) {
			throw problem.invalid("window", "is '" + values.get("window") + "' beside calendar '" + values.get("calendar")
					+ "'", "either a window or a calendar period (which gives the window), not both");
		}
		if (values.containsKey("burst")) {
			throw problem.invalid("burst", "is set beside calendar", "only with token-bucket, not a calendar quota");
		}
	}

	/** The penalty, {@link Duration#ZERO} when none is given. */
	static Duration blockFor(@Nullable String text, Problem problem) {
		if (text == null) {
			return Duration.ZERO;
		}
		String allowed = "a duration of whole milliseconds from 1ms to 366d with its unit, such as 30s, 15m or 1h";
		try {
			if (!text.isEmpty() && !text.chars().allMatch(Character::isDigit)) {
				Duration value = DurationStyle.detectAndParse(text);
				if (value.compareTo(Duration.ofMillis(1)) >= 0 && value.compareTo(MAX_BLOCK) <= 0
						&& value.toNanos() % 1_000_000 == 0) {
					return value;
				}
			}
		}
		catch (IllegalArgumentException | DateTimeParseException | ArithmeticException ex) {
			// reported below
		}
		throw problem.invalid("block-for", "is '" + text + "'", allowed);
	}

	/**
	 * The route's {@code quota-status}, 0 when not given: a 4xx status, and only where a calendar quota can
	 * refuse (checked here for a route's own limits; a route on plans is checked by the registry).
	 */
	static int quotaStatus(@Nullable String text, List<RouteLimit> limits, boolean usesPlans, Problem problem) {
		if (text == null) {
			return 0;
		}
		int status;
		try {
			status = Integer.parseInt(text);
		}
		catch (NumberFormatException ex) {
			status = 0;
		}
		if (status < 400 || status > 499) {
			throw problem.invalid("quota-status", "is '" + text + "'",
					"an HTTP status from 400 to 499 for a refusal by a calendar quota, such as 403");
		}
		if (!usesPlans && limits.stream().noneMatch(limit -> limit.policy().calendar() != null)) {
			throw problem.invalid("quota-status", "is '" + text + "' on a route without a calendar quota",
					"only where a limit has calendar: day, week or month");
		}
		return status;
	}

	/** Whether a refusal by these limits is a calendar quota's (one of them is one). */
	static boolean isQuota(List<RouteLimit> limits) {
		return limits.stream().anyMatch(limit -> limit.policy().calendar() != null);
	}

}
