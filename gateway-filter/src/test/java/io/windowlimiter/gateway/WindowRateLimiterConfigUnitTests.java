package io.windowlimiter.gateway;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.failure.FailMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.core.policy.RoutePolicy;

class WindowRateLimiterConfigUnitTests {

	private static Map<String, Object> args(String algorithm, String limit, String window) {
		Map<String, Object> args = new HashMap<>();
		args.put("rate-limiter", "#{@windowRateLimiter}");
		if (algorithm != null) {
			args.put("window-rate-limiter.algorithm", algorithm);
		}
		if (limit != null) {
			args.put("window-rate-limiter.limit", limit);
		}
		if (window != null) {
			args.put("window-rate-limiter.window", window);
		}
		return args;
	}

	@Test
	void readsEachAlgorithmLimitAndWindow() {
		assertThat(WindowRateLimiter.policyFor("orders", args("sliding-log", "100", "1m")).first().policy())
			.isEqualTo(new WindowPolicy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1)));
		assertThat(WindowRateLimiter.policyFor("orders", args("fixed-window", " 5 ", "500ms")).first().policy())
			.isEqualTo(new WindowPolicy(Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(500)));
		assertThat(WindowRateLimiter.policyFor("orders", args(null, "1", "1d")).first().policy())
			.isEqualTo(new WindowPolicy(Algorithm.SLIDING_WINDOW_COUNTER, 1, Duration.ofDays(1)));
		assertThat(WindowRateLimiter.policyFor("orders", args("sliding-window-counter", "7", "PT1H")).first().policy().window())
			.isEqualTo(Duration.ofHours(1));
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			token-buket            | 10   | 1m    | window-rate-limiter.algorithm | one of fixed-window, sliding-log, sliding-window-counter, token-bucket, concurrency
			SLIDING_LOG            | 10   | 1m    | window-rate-limiter.algorithm | one of fixed-window, sliding-log, sliding-window-counter, token-bucket, concurrency
			fixed-window           | 0    | 1m    | window-rate-limiter.limit     | a whole number from 1 to
			fixed-window           | -5   | 1m    | window-rate-limiter.limit     | a whole number from 1 to
			fixed-window           | ten  | 1m    | window-rate-limiter.limit     | a whole number from 1 to
			fixed-window           | 1.5  | 1m    | window-rate-limiter.limit     | a whole number from 1 to
			fixed-window           |      | 1m    | window-rate-limiter.limit     | a whole number from 1 to
			fixed-window           | 10   | 0s    | window-rate-limiter.window    | a duration of whole milliseconds from 1ms to 366d
			fixed-window           | 10   | -1m   | window-rate-limiter.window    | a duration of whole milliseconds from 1ms to 366d
			fixed-window           | 10   | 500us | window-rate-limiter.window    | a duration of whole milliseconds from 1ms to 366d
			fixed-window           | 10   | 400d  | window-rate-limiter.window    | a duration of whole milliseconds from 1ms to 366d
			fixed-window           | 10   | soon  | window-rate-limiter.window    | a duration of whole milliseconds from 1ms to 366d
			fixed-window           | 10   |       | window-rate-limiter.window    | a duration of whole milliseconds from 1ms to 366d
			sliding-window-counter | 1000000000 | 366d | window-rate-limiter.limit | limit * window in milliseconds below 2^53
			sliding-log            | 1000001 | 1h    | window-rate-limiter.limit     | at most 1000000 for the sliding log
			""")
	void aBadValueIsRefusedNamingRoutePropertyAndWhatIsAllowed(String algorithm, String limit, String window,
			String property, String allowed) {
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args(algorithm, limit, window)))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("route 'orders'")
			.hasMessageContaining(property)
			.hasMessageContaining("allowed: " + allowed)
			.satisfies(ex -> assertThat(((InvalidRouteConfigurationException) ex).getProperty()).isEqualTo(property));
	}

	/** A bare number would be milliseconds (Boot's default unit): 60 meant a minute or a second, never 60 ms. */
	@Test
	void aBareNumberOfAWindowIsRefusedAskingForItsUnit() {
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args("fixed-window", "10", "60")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.window is '60', a number without "
					+ "a unit, which would mean 60 ms; allowed: a duration with its unit: did you mean 60s? "
					+ "(or 60ms, 60m, 60h, 60d; from 1ms to 366d)");
		assertThatThrownBy(() -> new PolicyRegistry(Map.of("free", Map.of("limits[0].limit", "10", "limits[0].window",
				"1000"))))
			.hasMessageContaining("plan 'free': window-rate-limiter.plans.free.limits[0].window is '1000', a number "
					+ "without a unit")
			.hasMessageContaining("did you mean 1000s?");
		// an override through the endpoint or Java may send a JSON number
		assertThatThrownBy(() -> PolicyRegistry.overrideLimits("orders", java.util.List.of(Map.of("limit", 5,
				"window", 60))))
			.hasMessageContaining("override for 'orders': limits[0].window is '60', a number without a unit")
			.hasMessageContaining("did you mean 60s?");
		// durations with a unit stay valid
		assertThat(WindowRateLimiter.policyFor("orders", args("fixed-window", "10", "60s")).first().policy().window())
			.isEqualTo(Duration.ofSeconds(60));
		assertThat(WindowRateLimiter.policyFor("orders", args("fixed-window", "10", "60ms")).first().policy().window())
			.isEqualTo(Duration.ofMillis(60));
	}

	@Test
	void theSlidingLogIsARingUnlessTheSortedSetIsAskedFor() {
		assertThat(WindowRateLimiter.policyFor("orders", args("sliding-log", "10", "1m")).first().policy().algorithm())
			.isEqualTo(Algorithm.SLIDING_LOG);
		Map<String, Object> args = args("sliding-log", "10", "1m");
		args.put("window-rate-limiter.log-storage", "sorted-set");
		assertThat(WindowRateLimiter.policyFor("orders", args).first().policy().algorithm())
			.isEqualTo(Algorithm.SLIDING_LOG_SORTED_SET);
	}

	/** Token-sized limits on the sorted-set log would make each request block Redis (docs/settle.md). */
	@Test
	void theSortedSetLogRefusesTokenSizedLimits() {
		Map<String, Object> args = args("sliding-log", "10000", "1m");
		args.put("window-rate-limiter.log-storage", "sorted-set");
		assertThat(WindowRateLimiter.policyFor("orders", args).first().policy().limit()).isEqualTo(10_000);
		args.put("window-rate-limiter.limit", "10001");
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("route 'orders'")
			.hasMessageContaining("window-rate-limiter.limit is '10001' for sliding-log (sorted-set)")
			.hasMessageContaining("allowed: at most 10000 with log-storage sorted-set")
			.hasMessageContaining("use the ring");
		args.remove("window-rate-limiter.log-storage");
		assertThat(WindowRateLimiter.policyFor("orders", args).first().policy().limit()).as("the ring takes it")
			.isEqualTo(10_001);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			sliding-log  | zset       | one of ring, sorted-set
			fixed-window | sorted-set | only with sliding-log, not fixed-window
			""")
	void aLogStorageMustBeKnownAndOnlyForTheSlidingLog(String algorithm, String storage, String allowed) {
		Map<String, Object> args = args(algorithm, "10", "1m");
		args.put("window-rate-limiter.log-storage", storage);
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args))
			.hasMessageContaining("window-rate-limiter.log-storage is '" + storage + "'")
			.hasMessageContaining("allowed: " + allowed);
	}

	@Test
	void theTokenBucketTakesABurstThatDefaultsToTheLimit() {
		assertThat(WindowRateLimiter.policyFor("orders", args("token-bucket", "100", "1s")).first().policy().burst())
			.isEqualTo(100);
		Map<String, Object> args = args("token-bucket", "100", "1s");
		args.put("window-rate-limiter.burst", "500");
		assertThat(WindowRateLimiter.policyFor("orders", args).first().policy())
			.isEqualTo(new WindowPolicy(Algorithm.TOKEN_BUCKET, 100, Duration.ofSeconds(1), 500));
	}

	@Test
	void aTokenBucketIntervalTooShortForItsClockIsRefused() {
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args("token-bucket", "1000000000", "1s")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.limit is '1000000000' per '1s' for "
					+ "token-bucket, one request every 1.0E-6 ms; allowed: one request every 0.01 ms or more "
					+ "(limit at most 100 per millisecond of window, 100000 here): the bucket's time is kept in "
					+ "epoch milliseconds, a double, which cannot add shorter intervals exactly; use "
					+ "sliding-window-counter above that");
		// the bound itself, and the other algorithms, which keep no such time
		assertThat(WindowRateLimiter.policyFor("orders", args("token-bucket", "100000", "1s")).first().policy().limit())
			.isEqualTo(100_000);
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args("token-bucket", "100001", "1s")))
			.hasMessageContaining("window-rate-limiter.limit is '100001' per '1s'");
		assertThat(WindowRateLimiter.policyFor("orders", args("sliding-window-counter", "1000000000", "1s")).first()
			.policy()
			.limit()).isEqualTo(1_000_000_000);
		assertThatThrownBy(() -> new WindowPolicy(Algorithm.TOKEN_BUCKET, 1_000_000_000, Duration.ofSeconds(1)))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("at least 0.01 ms");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			token-bucket | 0   | a whole number from 1 to
			fixed-window | 500 | only with token-bucket, not fixed-window
			""")
	void aBurstMustBePositiveAndOnlyForTheTokenBucket(String algorithm, String burst, String allowed) {
		Map<String, Object> args = args(algorithm, "10", "1m");
		args.put("window-rate-limiter.burst", burst);
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args))
			.hasMessageContaining("window-rate-limiter.burst is '" + burst + "'")
			.hasMessageContaining("allowed: " + allowed);
	}

	@Test
	void severalLimitsInheritTheRouteAlgorithmAndGetNames() {
		Map<String, Object> args = new HashMap<>(Map.of("window-rate-limiter.algorithm", "fixed-window",
				"window-rate-limiter.limits[0].limit", "10", "window-rate-limiter.limits[0].window", "1s",
				"window-rate-limiter.limits.1.limit", "1000", "window-rate-limiter.limits.1.window", "1h",
				"window-rate-limiter.limits.1.algorithm", "sliding-log", "window-rate-limiter.limits.1.name", "hourly",
				"window-rate-limiter.cost", "2", "window-rate-limiter.shadow", "true"));
		RoutePolicy policy = WindowRateLimiter.policyFor("orders", args);
		assertThat(policy.limits()).containsExactly(
				new RouteLimit("orders-0", new WindowPolicy(Algorithm.FIXED_WINDOW, 10, Duration.ofSeconds(1))),
				new RouteLimit("hourly", new WindowPolicy(Algorithm.SLIDING_LOG, 1000, Duration.ofHours(1))));
		assertThat(policy.cost()).isEqualTo(2);
		assertThat(policy.shadow()).isTrue();
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			window-rate-limiter.limits[0].limit=5;window-rate-limiter.limits[0].window=1s;window-rate-limiter.limit=5 | window-rate-limiter.limit is set beside limits[...]
			window-rate-limiter.limits[0].limit=5;window-rate-limiter.limits[0].window=1s;window-rate-limiter.limits[2].limit=5;window-rate-limiter.limits[2].window=1m | window-rate-limiter.limits[2] skips an index
			window-rate-limiter.limits[0].limit=5;window-rate-limiter.limits[0].window=1s;window-rate-limiter.limits[0].name=a;window-rate-limiter.limits[1].limit=9;window-rate-limiter.limits[1].window=1m;window-rate-limiter.limits[1].name=a | repeats 'a'
			window-rate-limiter.limits[0].limit=5;window-rate-limiter.limits[0].window=1s;window-rate-limiter.limits[1].window=1m | window-rate-limiter.limits[1].limit is missing
			window-rate-limiter.limit=5;window-rate-limiter.window=1s;window-rate-limiter.cost=6 | window-rate-limiter.cost is '6', more than limit 'orders' allows at once
			window-rate-limiter.limit=5;window-rate-limiter.window=1s;window-rate-limiter.cost=0 | window-rate-limiter.cost is '0'
			window-rate-limiter.limit=5;window-rate-limiter.window=1s;window-rate-limiter.shadow=yes | window-rate-limiter.shadow is 'yes'; allowed: true or false
			""")
	void badSetsOfLimitsAreRefused(String pairs, String message) {
		Map<String, Object> args = new HashMap<>();
		for (String pair : pairs.split(";")) {
			String[] keyValue = pair.split("=", 2);
			args.put(keyValue[0], keyValue[1]);
		}
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args)).hasMessageContaining("route 'orders'")
			.hasMessageContaining(message);
	}

	@Test
	void failModeAndInstancesDefaultToOpenAndOne() {
		RoutePolicy policy = WindowRateLimiter.policyFor("orders", args("fixed-window", "10", "1m"));
		assertThat(policy.failMode()).isEqualTo(FailMode.OPEN);
		assertThat(policy.instances()).isEqualTo(1);
	}

	@Test
	void localFailModeKnowsHowManyInstancesShareTheLimit() {
		Map<String, Object> args = args("fixed-window", "10", "1m");
		args.put("window-rate-limiter.fail-mode", "local");
		args.put("window-rate-limiter.instances", "3");
		RoutePolicy policy = WindowRateLimiter.policyFor("orders", args);
		assertThat(policy.failMode()).isEqualTo(FailMode.LOCAL);
		assertThat(policy.instances()).isEqualTo(3);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			window-rate-limiter.fail-mode | fail-open | one of open, closed, local
			window-rate-limiter.instances | 0         | a whole number from 1 to 10000
			window-rate-limiter.instances | many      | a whole number from 1 to 10000
			""")
	void badFailureSettingsAreRefused(String property, String value, String allowed) {
		Map<String, Object> args = args("fixed-window", "10", "1m");
		args.put(property, value);
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args))
			.hasMessageContaining("route 'orders'")
			.hasMessageContaining(property + " is '" + value + "'")
			.hasMessageContaining("allowed: " + allowed);
	}

	@Test
	void anUnknownPropertyIsRefusedRatherThanIgnored() {
		Map<String, Object> args = args("fixed-window", "10", "1m");
		args.put("window-rate-limiter.limt", "5");
		assertThatThrownBy(() -> WindowRateLimiter.policyFor("orders", args))
			.hasMessageContaining("window-rate-limiter.limt is not a known property");
	}

}
