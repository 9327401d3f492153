package io.windowlimiter.gateway.failure;

import java.time.Duration;
import java.util.concurrent.TimeoutException;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(OutputCaptureExtension.class)
class RedisGuardTests {

	@Test
	void failuresAreCountedButLoggedAtMostOncePerInterval(CapturedOutput output) {
		RedisGuard guard = new RedisGuard(Duration.ofMillis(100), CircuitBreaker.ofDefaults("test"),
				Duration.ofHours(1));
		for (int i = 0; i < 50; i++) {
			guard.protect(Mono.error(new IllegalStateException("connection refused"))).onErrorResume(e -> Mono.empty())
				.block();
		}
		assertThat(guard.failures()).isEqualTo(50);
		assertThat(output.getOut().split("rate-limit decision\\(s\\) failed", -1)).hasSize(2);
	}

	@Test
	void aCallSlowerThanTheTimeoutFailsAtTheTimeout() {
		RedisGuard guard = new RedisGuard(Duration.ofMillis(50), CircuitBreaker.ofDefaults("test"),
				Duration.ofHours(1));
		Object outcome = guard.protect(Mono.never()).onErrorResume(Mono::just).block(Duration.ofSeconds(5));
		assertThat(outcome).isInstanceOf(TimeoutException.class);
		assertThat(guard.failures()).isEqualTo(1);
	}

}
