package io.windowlimiter.gateway.algorithm;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FixedWindowTests extends ScriptTestSupport {

	private final FixedWindow fixedWindow = new FixedWindow(this.redis);

	private final WindowPolicy tenPerMinute = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));

	@Test
	void countsDownWithinOneWindowAndDeniesPastTheLimit() {
		for (int i = 1; i <= 10; i++) {
			Decision decision = decide(this.fixedWindow, this.tenPerMinute, T0 + 1_000 * i);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(10 - i);
			assertThat(decision.resetMillis()).isEqualTo(60_000 - 1_000 * i);
			assertThat(decision.retryAfterMillis()).isZero();
		}
		Decision denied = decide(this.fixedWindow, this.tenPerMinute, T0 + 45_000);
		assertThat(denied).isEqualTo(new Decision(false, 0, 15_000, 15_000));
	}

	@Test
	void aNewWindowStartsFromZeroAtTheClockEdge() {
		// not at T0 + 59.999 s: the key's expiry (PX, real time) would then be 1 ms and could pass mid-burst
		assertThat(burst(this.fixedWindow, this.tenPerMinute, T0 + 50_000, 11)).isEqualTo(10);
		assertThat(decide(this.fixedWindow, this.tenPerMinute, T0 + 59_999).allowed()).isFalse();
		Decision next = decide(this.fixedWindow, this.tenPerMinute, T0 + 60_000);
		assertThat(next.allowed()).isTrue();
		assertThat(next.remaining()).isEqualTo(9);
	}

	@Test
	void retryAfterIsTheWindowEndAndIsExact() {
		burst(this.fixedWindow, this.tenPerMinute, T0 + 20_000, 10);
		Decision denied = decide(this.fixedWindow, this.tenPerMinute, T0 + 20_500);
		assertThat(denied.retryAfterMillis()).isEqualTo(39_500);
		assertThat(decide(this.fixedWindow, this.tenPerMinute, T0 + 20_500 + 39_499).allowed()).isFalse();
		assertThat(decide(this.fixedWindow, this.tenPerMinute, T0 + 20_500 + 39_500).allowed()).isTrue();
	}

	@Test
	void theKeyExpiresWhenItsWindowEndsAndDenialsWriteNothing() {
		decide(this.fixedWindow, this.tenPerMinute, T0 + 15_000);
		assertThat(pttl()).isBetween(44_000L, 45_000L);
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo((T0 / 60_000) + ":1");

		burst(this.fixedWindow, this.tenPerMinute, T0 + 15_000, 9);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		decide(this.fixedWindow, this.tenPerMinute, T0 + 16_000);
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
	}

	@Test
	void windowsAreAlignedToTheEpoch() {
		WindowPolicy perSecond = policy(Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(1_000));
		assertThat(decide(this.fixedWindow, perSecond, 1_999).allowed()).isTrue();
		assertThat(decide(this.fixedWindow, perSecond, 2_000).allowed()).isTrue();
		assertThat(decide(this.fixedWindow, perSecond, 2_999).retryAfterMillis()).isEqualTo(1);
	}

}
