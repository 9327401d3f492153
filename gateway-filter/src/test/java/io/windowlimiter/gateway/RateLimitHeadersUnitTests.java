package io.windowlimiter.gateway;

import java.time.Duration;
import java.util.Map;

import io.windowlimiter.gateway.algorithm.Algorithm;
import io.windowlimiter.gateway.algorithm.Decision;
import io.windowlimiter.gateway.algorithm.WindowPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitHeadersUnitTests {

	private final WindowPolicy hundredPerMinute = new WindowPolicy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1));

	@Test
	void anAllowedRequestGetsQuotaHeadersAndNoRetryAfter() {
		Map<String, String> headers = RateLimitHeaders.of("orders", this.hundredPerMinute,
				new Decision(true, 42, 12_001, 0));
		assertThat(headers).containsExactly(Map.entry("X-RateLimit-Limit", "100"),
				Map.entry("X-RateLimit-Remaining", "42"), Map.entry("X-RateLimit-Reset", "13"),
				Map.entry("RateLimit-Policy", "\"orders\";q=100;w=60"), Map.entry("RateLimit", "\"orders\";r=42;t=13"));
	}

	@Test
	void aDenialGetsRetryAfterRoundedUpToAtLeastOneSecond() {
		assertThat(RateLimitHeaders.of("orders", this.hundredPerMinute, new Decision(false, 0, 1, 1)))
			.containsEntry("Retry-After", "1")
			.containsEntry("X-RateLimit-Remaining", "0");
		assertThat(RateLimitHeaders.of("orders", this.hundredPerMinute, new Decision(false, 0, 30_000, 30_000)))
			.containsEntry("Retry-After", "30");
		assertThat(RateLimitHeaders.of("orders", this.hundredPerMinute, new Decision(false, 0, 30_001, 30_001)))
			.containsEntry("Retry-After", "31");
	}

	@Test
	void subSecondWindowsAndOddRouteIdsStayValidFieldValues() {
		WindowPolicy fast = new WindowPolicy(Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(500));
		assertThat(RateLimitHeaders.of("a\"b\\c\u00e9", fast, new Decision(true, 4, 500, 0)))
			.containsEntry("RateLimit-Policy", "\"a\\\"b\\\\c_\";q=5;w=1");
	}

}
