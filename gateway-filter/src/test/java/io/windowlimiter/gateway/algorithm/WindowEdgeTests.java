package io.windowlimiter.gateway.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The practice case of the design notes: a limit of 100 per minute, 100 requests at second 59 and
 * 100 more at second 61, two seconds and one window edge apart.
 */
class WindowEdgeTests extends ScriptTestSupport {

	private static final long LIMIT = 100;

	private static final Duration MINUTE = Duration.ofMinutes(1);

	private int allowedAcrossTheEdge(Algorithm algorithm) {
		WindowAlgorithm window = algorithm(algorithm, this.redis);
		WindowPolicy policy = policy(algorithm, LIMIT, MINUTE);
		return burst(window, policy, T0 + 59_000, 100) + burst(window, policy, T0 + 61_000, 100);
	}

	@Test
	void fixedWindowLetsTwiceTheLimitThrough() {
		assertThat(allowedAcrossTheEdge(Algorithm.FIXED_WINDOW)).isEqualTo(200);
	}

	@Test
	void slidingLogAllowsExactlyTheLimit() {
		assertThat(allowedAcrossTheEdge(Algorithm.SLIDING_LOG)).isEqualTo(100);
	}

	@Test
	void slidingLogInASortedSetAllowsExactlyTheLimit() {
		assertThat(allowedAcrossTheEdge(Algorithm.SLIDING_LOG_SORTED_SET)).isEqualTo(100);
	}

	@Test
	void slidingWindowCounterAllowsWhatItsEstimateAdmits() {
		// At second 61 the previous window still weighs (60 - 1) / 60: 100 * 59/60 = 98.33 of the limit
		// is taken, so floor(100 - 98.33) = 1 more request fits.
		double previousWeight = (60.0 - 1.0) / 60.0;
		long admittedAtSecond61 = (long) Math.floor(LIMIT - 100 * previousWeight);
		assertThat(admittedAtSecond61).isEqualTo(1);
		assertThat(allowedAcrossTheEdge(Algorithm.SLIDING_WINDOW_COUNTER)).isEqualTo(100 + admittedAtSecond61);
	}

}
