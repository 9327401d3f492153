package io.windowlimiter.core.operations;

import java.time.Duration;
import java.util.concurrent.TimeoutException;

import reactor.core.publisher.Mono;

/**
 * How long each of an operator's Redis calls waits at most ({@code window-rate-limiter.redis-timeout}, the
 * decisions' bound), then fails with a {@link TimeoutException} naming the bound instead of hanging: the
 * endpoint answers it 503.
 */
final class OperatorRedisBound {

	private final Duration redisTimeout;

	OperatorRedisBound(Duration redisTimeout) {
		this.redisTimeout = redisTimeout;
	}

	/** The call, failed with a {@link TimeoutException} naming the bound when Redis answers nothing within it. */
	<T> Mono<T> bounded(Mono<T> call) {
		return call.timeout(this.redisTimeout, Mono.error(() -> new TimeoutException(
				"Redis answered nothing within " + this.redisTimeout.toMillis() + " ms")));
	}

}
