package io.windowlimiter.core.failure;

import java.util.concurrent.TimeoutException;

/** The answer has waited all its budget for Redis already. */
final class RedisBudgetSpentException extends TimeoutException {

	RedisBudgetSpentException() {
		super("This answer has waited redis-timeout for Redis already: deciding by fail-mode");
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this;
	}

}
