package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.List;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.Decision;
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
		assertThat(local.decideAll(keys, limits, 1, T0).limitIndex()).isEqualTo(1);
	}

	@Test
	void aConcurrencyLimitCountsThisInstancesRequestsInFlightUntilReleased() {
		LocalWindowLimiter local = new LocalWindowLimiter(10);
		List<String> keys = List.of("rate", "slots");
		List<WindowPolicy> limits = List.of(policy(10),
				new WindowPolicy(Algorithm.CONCURRENCY, 2, Duration.ofMinutes(10)));
		assertThat(local.decideAll(keys, limits, 1, T0).decision()).isEqualTo(new Decision(true, 1, 600_000, 0));
		assertThat(local.decideAll(keys, limits, 1, T0).decision().allowed()).isTrue();
		LocalWindowLimiter.Reported refused = local.decideAll(keys, limits, 1, T0);
		assertThat(refused.limitIndex()).isEqualTo(1);
		assertThat(refused.decision()).isEqualTo(new Decision(false, 0, 600_000, 1_000));
		// the rate counted the two that passed only
		assertThat(local.decide("rate", 10, Duration.ofMinutes(1), 0, T0).remaining()).isEqualTo(8);
		local.release(List.of("slots"));
		assertThat(local.decideAll(keys, limits, 1, T0).decision().allowed()).isTrue();
		local.release(List.of("slots"));
		local.release(List.of("slots"));
		// releasing more than was taken never goes below none in flight
		local.release(List.of("slots"));
		assertThat(local.decideAll(keys, limits, 1, T0).decision()).isEqualTo(new Decision(true, 1, 600_000, 0));
	}

	private static WindowPolicy policy(long limit) {
		return new WindowPolicy(Algorithm.SLIDING_WINDOW_COUNTER, limit, Duration.ofMinutes(1));
	}

}
