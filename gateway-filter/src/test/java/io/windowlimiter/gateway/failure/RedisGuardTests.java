package io.windowlimiter.gateway.failure;

import java.time.Duration;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.RedisSystemException;

import static org.assertj.core.api.Assertions.assertThat;

/** The guard's rules, with publishers standing in for Redis calls; {@link RedisFaultTests} uses a real Redis. */
@ExtendWith(OutputCaptureExtension.class)
class RedisGuardTests {

	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(150);

	private final RedisGuard guard = new RedisGuard(TIMEOUT, STALL, Duration.ofHours(1));

	@AfterEach
	void close() {
		this.guard.close();
	}

	private Object outcome(Mono<?> call) {
		return this.guard.protect(call).cast(Object.class).onErrorResume(Mono::just).block(Duration.ofSeconds(5));
	}

	private long millisOf(Runnable action) {
		long start = System.nanoTime();
		action.run();
		return Duration.ofNanos(System.nanoTime() - start).toMillis();
	}

	@Test
	void failuresAreCountedButLoggedAtMostOncePerInterval(CapturedOutput output) {
		for (int i = 0; i < 50; i++) {
			outcome(Mono.error(new IllegalStateException("connection refused")));
		}
		assertThat(this.guard.failures()).isEqualTo(50);
		assertThat(output.getOut().split("rate-limit decision\\(s\\) failed", -1)).hasSize(2);
	}

	@Test
	void aCallRedisNeverAnswersFailsAtTheStallTimeoutAndTheGuardStalls() {
		Object[] result = new Object[1];
		long waited = millisOf(() -> result[0] = outcome(Mono.never()));
		assertThat(result[0]).isInstanceOf(TimeoutException.class);
		assertThat(waited).isBetween(STALL.toMillis(), TIMEOUT.toMillis() - 1);
		assertThat(this.guard.isStalled()).isTrue();
	}

	@Test
	void whileStalledOneTrialAtATimeWaitsAndTheOthersFailAtOnce() {
		outcome(Mono.never());
		assertThat(this.guard.isStalled()).isTrue();
		Sinks.One<String> redis = Sinks.one();
		Disposable trial = this.guard.protect(redis.asMono()).subscribe(value -> { }, error -> { });
		long waited = millisOf(() -> assertThat(outcome(Mono.just("answered"))).isInstanceOf(TimeoutException.class));
		assertThat(waited).as("a call beside the trial does not wait").isLessThan(STALL.toMillis());
		redis.tryEmitValue("back");
		assertThat(this.guard.isStalled()).as("the trial's answer ends the stall").isFalse();
		assertThat(outcome(Mono.just("answered"))).isEqualTo("answered");
		trial.dispose();
	}

	@Test
	void aCancelledTrialMakesRoomForTheNextOneStallTimeoutLater() throws InterruptedException {
		outcome(Mono.never());
		Disposable trial = this.guard.protect(Mono.never()).subscribe(value -> { }, error -> { });
		trial.dispose();
		assertThat(outcome(Mono.just("answered"))).as("too soon for another trial")
			.isInstanceOf(TimeoutException.class);
		Thread.sleep(STALL.toMillis() + 10);
		assertThat(outcome(Mono.just("answered"))).as("the next call is the trial").isEqualTo("answered");
	}

	@Test
	void aCallThatWaitsWhileRedisAnswersOthersIsBoundOnlyByTheTimeout() {
		// Redis busy, not gone: other calls keep getting answers while this one waits
		Disposable others = Flux.interval(Duration.ofMillis(20))
			.concatMap(i -> this.guard.protect(Mono.just(i)))
			.subscribe();
		try {
			Object[] result = new Object[1];
			long waited = millisOf(() -> result[0] = outcome(Mono.never()));
			assertThat(result[0]).isInstanceOf(TimeoutException.class);
			assertThat(waited).isGreaterThanOrEqualTo(TIMEOUT.toMillis());
			assertThat(this.guard.isStalled()).isFalse();
		}
		finally {
			others.dispose();
		}
	}

	@Test
	void slowAnswersWithRedisAnsweringInBetweenAreNeverGivenUp() {
		Disposable others = Flux.interval(Duration.ofMillis(10))
			.concatMap(i -> this.guard.protect(Mono.just(i)))
			.subscribe();
		try {
			// each call takes twice the stall timeout, but Redis answers someone every 10 ms
			Long failed = Flux.range(0, 60)
				.delayElements(Duration.ofMillis(5))
				.flatMap(i -> this.guard.protect(Mono.delay(STALL.multipliedBy(2)).thenReturn(i))
					.map(value -> 0L)
					.onErrorResume(error -> Mono.just(1L)))
				.reduce(Long::sum)
				.block(Duration.ofSeconds(10));
			assertThat(failed).isZero();
			assertThat(this.guard.failures()).isZero();
		}
		finally {
			others.dispose();
		}
	}

	@Test
	void anErrorReplyShowsRedisIsThere() {
		outcome(Mono.never());
		assertThat(this.guard.isStalled()).isTrue();
		outcome(Mono.error(new RedisSystemException("OOM", new RedisCommandExecutionException("OOM"))));
		assertThat(this.guard.isStalled()).isFalse();
	}

}
