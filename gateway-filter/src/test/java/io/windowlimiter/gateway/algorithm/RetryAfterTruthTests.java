package io.windowlimiter.gateway.algorithm;

import java.time.Duration;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Retry-After must be truthful and tight for every algorithm: a client that waits exactly as long as
 * told is allowed, one that comes back a millisecond sooner is not. Checked on seeded random traffic.
 */
class RetryAfterTruthTests extends ScriptTestSupport {

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aClientThatWaitsAsToldIsAllowedAndNotSooner(Algorithm algorithm) {
		WindowAlgorithm window = algorithm(algorithm, this.redis);
		WindowPolicy policy = policy(algorithm, 7, Duration.ofSeconds(60));
		Random random = new Random(42);
		long now = T0;
		int denials = 0;
		for (int i = 0; i < 300; i++) {
			now += random.nextInt(8_000);
			Decision decision = decide(window, policy, now);
			if (!decision.allowed()) {
				denials++;
				long retry = decision.retryAfterMillis();
				assertThat(retry).isPositive();
				assertThat(decide(window, policy, now + retry - 1).allowed()).as("%s at retry - 1 ms", algorithm)
					.isFalse();
				now += retry;
				assertThat(decide(window, policy, now).allowed()).as("%s after retry-after", algorithm).isTrue();
			}
		}
		assertThat(denials).as("the trace must exercise denials").isGreaterThan(20);
	}

}
