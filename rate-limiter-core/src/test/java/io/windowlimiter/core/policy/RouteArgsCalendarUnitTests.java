package io.windowlimiter.core.policy;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.CalendarPeriod;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** calendar, time-zone, week-start, block-for and quota-status as routes, plans and overrides write them. */
class RouteArgsCalendarUnitTests {

	private static final String P = RouteArgs.PREFIX;

	@Test
	void aMonthlyQuotaInAZoneIsAFixedWindowOfTheCalendar() {
		RoutePolicy policy = RouteArgs.parse("api", Map.of(P + "limit", "10000", P + "calendar", "month",
				P + "time-zone", "Europe/Berlin", P + "quota-status", "403"));
		assertThat(policy.first().policy().algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
		assertThat(policy.first().policy().calendar())
			.isEqualTo(new CalendarPeriod(CalendarPeriod.Unit.MONTH, ZoneId.of("Europe/Berlin"), DayOfWeek.MONDAY));
		assertThat(policy.quotaStatus()).isEqualTo(403);
	}

	@Test
	void limitsTakeTheRoutesBlockForAndACalendarOfTheirOwn() {
		RoutePolicy policy = RouteArgs.parse("login", Map.of(P + "block-for", "15m", P + "limits[0].limit", "5",
				P + "limits[0].window", "1m", P + "limits[1].limit", "50", P + "limits[1].calendar", "week",
				P + "limits[1].week-start", "sunday", P + "limits[1].block-for", "1h"));
		assertThat(policy.limits().get(0).blockFor()).isEqualTo(Duration.ofMinutes(15));
		assertThat(policy.limits().get(1).blockFor()).isEqualTo(Duration.ofHours(1));
		assertThat(policy.limits().get(1).policy().calendar().weekStart()).isEqualTo(DayOfWeek.SUNDAY);
		assertThat(policy.limits().get(1).policy().calendar().zone()).isEqualTo(ZoneId.of("UTC"));
	}

	@Test
	void plansAndOverridesTakeThemToo() {
		PolicyRegistry registry = new PolicyRegistry(Map.of("pro", Map.of("limits[0].limit", "100000",
				"limits[0].calendar", "month", "limits[0].time-zone", "America/New_York", "limits[1].limit", "10",
				"limits[1].window", "1s", "limits[1].block-for", "30s")));
		assertThat(registry.planLimits().get("pro").get(0).policy().calendar().unit()).isEqualTo(CalendarPeriod.Unit.MONTH);
		assertThat(registry.planLimits().get("pro").get(1).blockFor()).isEqualTo(Duration.ofSeconds(30));
		registry.put("api", Map.of(P + "plan", "pro", P + "quota-status", "403"));
		assertThat(PolicyRegistry.overrideLimits("api", java.util.List.of(Map.of("limit", "5", "calendar", "day",
				"time-zone", "Pacific/Kiritimati"))).get(0).policy().calendar().zone().getId()).isEqualTo("Pacific/Kiritimati");
	}

	@Test
	void mistakesNameRoutePropertyAndWhatIsAllowed() {
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "calendar", "year")))
			.hasMessageContaining("route 'api'").hasMessageContaining(P + "calendar").hasMessageContaining("day, week, month");
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "calendar", "day",
				P + "time-zone", "Mars/Olympus")))
			.hasMessageContaining(P + "time-zone").hasMessageContaining("'Mars/Olympus'").hasMessageContaining("IANA");
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "calendar", "day",
				P + "window", "1d")))
			.hasMessageContaining(P + "window").hasMessageContaining("either a window or a calendar period");
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "calendar", "day",
				P + "algorithm", "token-bucket")))
			.hasMessageContaining(P + "calendar").hasMessageContaining("only with algorithm fixed-window");
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "calendar", "day",
				P + "week-start", "sunday")))
			.hasMessageContaining(P + "week-start").hasMessageContaining("only with calendar: week");
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "window", "1m",
				P + "time-zone", "UTC")))
			.hasMessageContaining(P + "time-zone").hasMessageContaining("only with calendar");
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "window", "1m",
				P + "block-for", "900")))
			.hasMessageContaining(P + "block-for").hasMessageContaining("'900'").hasMessageContaining("15m");
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "window", "1m",
				P + "quota-status", "403")))
			.hasMessageContaining(P + "quota-status").hasMessageContaining("without a calendar quota");
		assertThatThrownBy(() -> RouteArgs.parse("api", Map.of(P + "limit", "5", P + "calendar", "day",
				P + "quota-status", "200")))
			.hasMessageContaining(P + "quota-status").hasMessageContaining("400 to 499");
		assertThatThrownBy(() -> new PolicyRegistry(Map.of("free", Map.of("limits[0].limit", "5",
				"limits[0].window", "1m"))).put("api", Map.of(P + "plan", "free", P + "quota-status", "403")))
			.hasMessageContaining(P + "quota-status").hasMessageContaining("plans have no calendar quota");
	}

}
