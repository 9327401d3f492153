package io.windowlimiter.core;

import java.time.Duration;

import io.windowlimiter.core.algorithm.LimitScript;

import org.springframework.context.SmartLifecycle;

/**
 * Gives the parts of hot clients' quotas leased here back to Redis at shutdown ({@code lease}, see
 * {@link RateLimiterCore#giveBackLeases}): once the web server has answered its last request, and before the
 * script's sender writes what waits and Spring Data Redis closes the connection. Unreturned, a part would be
 * nobody's to admit until its window ended.
 */
public final class LeasesAtShutdown implements SmartLifecycle {

	private final RateLimiterCore core;

	private final Duration wait;

	private volatile boolean running;

	/**
	 * @param script the script's sender: asked for so that this stops before it does (a dependent stops first)
	 * @param wait the longest shutdown waits for Redis to take the parts ({@code redis-timeout})
	 */
	public LeasesAtShutdown(RateLimiterCore core, LimitScript script, Duration wait) {
		this.core = core;
		this.wait = wait;
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		try {
			this.core.giveBackLeases().block(this.wait);
		}
		catch (RuntimeException ex) {
			// Redis did not take them in time: the parts stay reserved until their window ends
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		// the script's phase: stopped after Boot's web server, before the script (which this depends on)
		return SmartLifecycle.DEFAULT_PHASE - 2048 - 1;
	}

}
