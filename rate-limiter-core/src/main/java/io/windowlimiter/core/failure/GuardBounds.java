package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * How long and how many the guard lets calls wait: {@code timeout}, the hard bound of every call (and of all
 * the calls made for one answer, its {@link RedisBudget}); the silence taken for a stall ({@code stallTimeout},
 * at most the timeout); the watchdog's tick, a quarter of that; and the most calls waiting at once on one node.
 */
final class GuardBounds {

	final long timeoutNanos;

	final long stallNanos;

	final long tickNanos;

	final int maxInFlight;

	GuardBounds(Duration timeout, Duration stallTimeout, int maxInFlight) {
		if (timeout.isNegative() || timeout.isZero() || stallTimeout.isNegative() || stallTimeout.isZero()) {
			throw new IllegalArgumentException("Redis timeouts must be positive: " + timeout + ", " + stallTimeout);
		}
		if (maxInFlight < 1) {
			throw new IllegalArgumentException("The most decisions in flight must be at least 1: " + maxInFlight);
		}
		this.timeoutNanos = timeout.toNanos();
		this.stallNanos = Math.min(stallTimeout.toNanos(), this.timeoutNanos);
		this.tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), this.stallNanos / 4);
		this.maxInFlight = maxInFlight;
	}

	/**
	 * The longest a call may wait: the timeout, or less when the answer's budget has less left; 0 or less when
	 * the answer has waited all it may for Redis.
	 * @param budget the answer's budget; null for a call bounded by the timeout alone
	 */
	long boundOf(@Nullable RedisBudget budget) {
		return (budget != null) ? Math.min(this.timeoutNanos, budget.leftNanos()) : this.timeoutNanos;
	}

	/** A budget for one answer's Redis calls: {@code timeout} in all. */
	RedisBudget newBudget() {
		return new RedisBudget(this.timeoutNanos);
	}

}
