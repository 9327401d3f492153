package io.windowlimiter.core.failure;

import java.util.concurrent.TimeoutException;

/** Too many decisions wait on Redis already. */
final class RedisShedException extends TimeoutException {

	RedisShedException(int maxInFlight) {
		super(maxInFlight + " rate-limit decisions wait on Redis already: deciding by fail-mode");
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this;
	}

}
