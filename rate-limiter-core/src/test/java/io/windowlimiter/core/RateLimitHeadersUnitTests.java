package io.windowlimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.WindowPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import io.windowlimiter.core.policy.RouteLimit;

class RateLimitHeadersUnitTests {

	private final RateLimitHeaders headers = new RateLimitHeaders(RateLimitHeaders.Names.defaults());

	private final RouteLimit perMinute = new RouteLimit("orders",
			new WindowPolicy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1)));

	private final RouteLimit perHour = new RouteLimit("orders-hourly",
			new WindowPolicy(Algorithm.FIXED_WINDOW, 1000, Duration.ofHours(1)));

	@Test
	void anAllowedRequestGetsQuotaHeadersAndNoRetryAfter() {
		Map<String, String> sent = this.headers.of(List.of(this.perMinute), this.perMinute,
				new Decision(true, 42, 12_001, 0), false);
		assertThat(sent).containsExactly(Map.entry("X-RateLimit-Limit", "100"),
				Map.entry("X-RateLimit-Remaining", "42"), Map.entry("X-RateLimit-Reset", "13"),
				Map.entry("RateLimit-Policy", "\"orders\";q=100;w=60"), Map.entry("RateLimit", "\"orders\";r=42;t=13"));
	}

	@Test
	void aRefusalGetsRetryAfterRoundedUpToAtLeastOneSecond() {
		assertThat(this.headers.of(List.of(this.perMinute), this.perMinute, new Decision(false, 0, 1, 1), true))
			.containsEntry("Retry-After", "1")
			.containsEntry("X-RateLimit-Remaining", "0");
		assertThat(this.headers.of(List.of(this.perMinute), this.perMinute, new Decision(false, 0, 30_000, 30_000),
				true))
			.containsEntry("Retry-After", "30");
		assertThat(this.headers.of(List.of(this.perMinute), this.perMinute, new Decision(false, 0, 30_001, 30_001),
				true))
			.containsEntry("Retry-After", "31");
	}

	@Test
	void aShadowedDenialGetsNoRetryAfter() {
		assertThat(this.headers.of(List.of(this.perMinute), this.perMinute, new Decision(false, 0, 5_000, 5_000),
				false))
			.doesNotContainKey("Retry-After")
			.containsEntry("X-RateLimit-Remaining", "0");
	}

	@Test
	void everyPolicyIsListedAndTheReportedOneDescribed() {
		assertThat(this.headers.of(List.of(this.perMinute, this.perHour), this.perHour,
				new Decision(true, 3, 600_000, 0), false))
			.containsEntry("RateLimit-Policy", "\"orders\";q=100;w=60, \"orders-hourly\";q=1000;w=3600")
			.containsEntry("RateLimit", "\"orders-hourly\";r=3;t=600")
			.containsEntry("X-RateLimit-Limit", "1000");
	}

	@Test
	void eachSetCanBeSwitchedOffOrRenamed() {
		RateLimitHeaders renamed = new RateLimitHeaders(
				new RateLimitHeaders.Names(true, "Quota-Limit", "Quota-Left", "Quota-Reset", false, "x", "y"));
		assertThat(renamed.of(List.of(this.perMinute), this.perMinute, new Decision(true, 5, 1_000, 0), false))
			.containsOnlyKeys("Quota-Limit", "Quota-Left", "Quota-Reset");
		RateLimitHeaders ietfOnly = new RateLimitHeaders(new RateLimitHeaders.Names(false, "a", "b", "c", true,
				RateLimitHeaders.POLICY, RateLimitHeaders.RATE_LIMIT));
		assertThat(ietfOnly.of(List.of(this.perMinute), this.perMinute, new Decision(true, 5, 1_000, 0), false))
			.containsOnlyKeys("RateLimit-Policy", "RateLimit");
	}

	@Test
	void aWindowOfNoWholeSecondsIsAdvertisedRoundedUp() {
		// the draft's w is whole seconds: q per the longer w never exceeds the real limit
		RouteLimit halfSecond = new RouteLimit("fast", new WindowPolicy(Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(500)));
		RouteLimit oneAndAHalf = new RouteLimit("slow", new WindowPolicy(Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(1_500)));
		RouteLimit oneMillisecond = new RouteLimit("tiny", new WindowPolicy(Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(1)));
		assertThat(RateLimitHeaders.policy(List.of(halfSecond, oneAndAHalf, oneMillisecond)))
			.isEqualTo("\"fast\";q=5;w=1, \"slow\";q=5;w=2, \"tiny\";q=1;w=1");
	}

	@Test
	void subSecondWindowsAndOddNamesStayValidFieldValues() {
		RouteLimit fast = new RouteLimit("a\"b\\c\u00e9", new WindowPolicy(Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(500)));
		assertThat(this.headers.of(List.of(fast), fast, new Decision(true, 4, 500, 0), false))
			.containsEntry("RateLimit-Policy", "\"a\\\"b\\\\c_\";q=5;w=1");
	}

	/**
	 * A token bucket of 5 a second holding up to 10 reported X-RateLimit-Limit: 5 with Remaining: 9. Its
	 * quota is its burst, the most it allows at once, over the time that burst takes to refill, so q/w is
	 * still its rate and remaining never exceeds the limit reported.
	 */
	@Test
	void aTokenBucketReportsItsBurstAsTheQuotaOverTheTimeItTakesToRefill() {
		RouteLimit bucket = new RouteLimit("burst", new WindowPolicy(Algorithm.TOKEN_BUCKET, 5, Duration.ofSeconds(1), 10));
		Map<String, String> sent = this.headers.of(List.of(bucket), bucket, new Decision(true, 9, 200, 0), false);
		assertThat(sent).containsEntry("X-RateLimit-Limit", "10")
			.containsEntry("X-RateLimit-Remaining", "9")
			.containsEntry("RateLimit-Policy", "\"burst\";q=10;w=2")
			.containsEntry("RateLimit", "\"burst\";r=9;t=1");
		assertThat(Long.parseLong(sent.get("X-RateLimit-Remaining"))).isLessThanOrEqualTo(Long.parseLong(sent.get(
				"X-RateLimit-Limit")));
		// a refill time of no whole seconds is rounded up: 3 per 2 s holding 4 refills in 2.67 s
		RouteLimit odd = new RouteLimit("odd", new WindowPolicy(Algorithm.TOKEN_BUCKET, 3, Duration.ofSeconds(2), 4));
		// a bucket whose burst is its limit reads as before; the largest values do not overflow
		RouteLimit plain = new RouteLimit("plain", new WindowPolicy(Algorithm.TOKEN_BUCKET, 1000, Duration.ofHours(1)));
		RouteLimit huge = new RouteLimit("huge", new WindowPolicy(Algorithm.TOKEN_BUCKET, 1, Duration.ofDays(366),
				WindowPolicy.MAX_LIMIT));
		assertThat(RateLimitHeaders.policy(List.of(odd, plain, huge)))
			.isEqualTo("\"odd\";q=4;w=3, \"plain\";q=1000;w=3600, \"huge\";q=1000000000;w=31622400000000000");
	}

}
