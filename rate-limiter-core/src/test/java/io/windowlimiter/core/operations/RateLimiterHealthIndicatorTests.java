package io.windowlimiter.core.operations;

import java.time.Duration;
import java.util.Map;

import io.lettuce.core.RedisConnectionException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.failure.RedisGuard;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

/** The limiter's health says what Redis does to decisions, and stays UP: the fail-mode keeps serving. */
class RateLimiterHealthIndicatorTests {

	private final RedisGuard guard = new RedisGuard(Duration.ofMillis(300), Duration.ofMillis(100), Duration.ofSeconds(10));

	private final PolicyRegistry registry = new PolicyRegistry(Map.of());

	private final RateLimiterHealthIndicator indicator = new RateLimiterHealthIndicator(this.guard, this.registry);

	@AfterEach
	void close() {
		this.guard.close();
	}

	@Test
	void answeringRedisIsOk() {
		this.guard.protect(Mono.just("OK")).block();
		Health health = this.indicator.health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("state", "ok").containsEntry("redis", "answering")
			.doesNotContainKey("failModes");
	}

	@Test
	void failedDecisionsSinceTheLastCheckAreDegradedButUp() {
		this.guard.protect(Mono.error(new RedisConnectionException("refused"))).onErrorResume(e -> Mono.empty()).block();
		Health health = this.indicator.health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("state", "degraded")
			.containsEntry("redis", "failing")
			.containsEntry("failedSinceLastCheck", 1L)
			.containsKey("failModes");
		assertThat(this.indicator.health().getDetails()).as("nothing failed since").containsEntry("redis", "answering");
	}

	@Test
	void aSilentRedisIsStalledButUp() throws InterruptedException {
		Disposable waiting = this.guard.protect(Mono.never()).subscribe(v -> { }, e -> { });
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (!this.guard.isStalled() && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		Health health = this.indicator.health();
		waiting.dispose();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("state", "degraded").containsEntry("redis", "stalled");
	}

}
