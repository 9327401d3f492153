package io.windowlimiter.core.failure;

import java.util.concurrent.TimeoutException;

/** Redis is taken to be hanging, and another decision is already trying it. */
final class RedisStalledException extends TimeoutException {

	RedisStalledException() {
		super("Redis is hanging: deciding by fail-mode while one trial decision waits on it");
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this;
	}

}
