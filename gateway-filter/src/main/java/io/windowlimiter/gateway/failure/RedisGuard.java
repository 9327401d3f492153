package io.windowlimiter.gateway.failure;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

/**
 * Bounds every Redis decision: a timeout, so no request waits on a hanging or slow Redis longer than
 * that, and a circuit breaker, so a dead Redis fails calls at once instead of costing a timeout each.
 * The breaker closes again by itself once trial calls succeed.
 *
 * <p>Failures are counted and logged at most once per {@code logInterval}, with how many there were,
 * so an outage under load does not flood the log; breaker state changes are always logged.
 */
public class RedisGuard {

	private static final Log logger = LogFactory.getLog(RedisGuard.class);

	private final Duration timeout;

	private final CircuitBreaker circuitBreaker;

	private final long logIntervalNanos;

	private final AtomicLong failures = new AtomicLong();

	private final AtomicLong unreported = new AtomicLong();

	private final AtomicLong lastReport = new AtomicLong(System.nanoTime() - Long.MAX_VALUE / 2);

	public RedisGuard(Duration timeout, CircuitBreaker circuitBreaker, Duration logInterval) {
		this.timeout = timeout;
		this.circuitBreaker = circuitBreaker;
		this.logIntervalNanos = logInterval.toNanos();
		circuitBreaker.getEventPublisher()
			.onStateTransition(event -> logger.warn("Redis circuit breaker " + event.getStateTransition()
					+ ((event.getStateTransition().getToState() == CircuitBreaker.State.OPEN)
							? ": Redis is failing, routes apply their fail-mode without calling it"
							: "")));
	}

	/** The call, bounded by the timeout and the circuit breaker. */
	public <T> Mono<T> protect(Mono<T> call) {
		return call.timeout(this.timeout, Mono.error(() -> new TimeoutException("Redis did not answer within " + this.timeout)))
			.transformDeferred(CircuitBreakerOperator.of(this.circuitBreaker))
			.doOnError(this::record);
	}

	/** How many decisions failed since start. */
	public long failures() {
		return this.failures.get();
	}

	public CircuitBreaker circuitBreaker() {
		return this.circuitBreaker;
	}

	private void record(Throwable error) {
		this.failures.incrementAndGet();
		long pending = this.unreported.incrementAndGet();
		long now = System.nanoTime();
		long last = this.lastReport.get();
		if (now - last >= this.logIntervalNanos && this.lastReport.compareAndSet(last, now)) {
			this.unreported.addAndGet(-pending);
			String reason = (error instanceof CallNotPermittedException) ? "circuit breaker open" : error.toString();
			logger.warn(pending + " rate-limit decision(s) failed since the last report, routes applied their "
					+ "fail-mode; latest: " + reason);
		}
	}

}
