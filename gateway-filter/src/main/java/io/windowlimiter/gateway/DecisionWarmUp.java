package io.windowlimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.windowlimiter.gateway.algorithm.LimitScript;
import io.windowlimiter.gateway.algorithm.Algorithm;
import io.windowlimiter.gateway.algorithm.WindowPolicy;
import io.windowlimiter.gateway.key.RedisKeys;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the decision path before the web server takes its first request: connects to Redis, loads the
 * script, and decides a few hundred requests of a throwaway client
 * with every algorithm, so that class loading, the connection and the first compilations are paid
 * here and not by the first clients. Without it the first decisions of a fresh instance were the
 * slowest it ever made (measured: several hundred ms on two busy cores).
 *
 * <p>Started in the phase just before the web server's. Start-up waits for it at most
 * {@code maxWait}: if Redis is not there, the application starts anyway and routes apply their
 * fail-mode until it is.
 */
public class DecisionWarmUp implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(DecisionWarmUp.class);

	private static final int DECISIONS = 400;

	private static final int CONCURRENCY = 16;

	/** Generous for every algorithm: the warm-up client must never be denied, its keys vanish in a second. */
	private static final long LIMIT = 10_000;

	private static final Duration WINDOW = Duration.ofSeconds(1);

	private final LimitScript script;

	private final Duration maxWait;

	private volatile boolean running;

	public DecisionWarmUp(LimitScript script, Duration maxWait) {
		this.script = script;
		this.maxWait = maxWait;
	}

	@Override
	public void start() {
		this.running = true;
		long started = System.nanoTime();
		String client = "warm-up-" + UUID.randomUUID();
		List<String> keys = new ArrayList<>();
		List<WindowPolicy> policies = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			keys.add(RedisKeys.of("window-rate-limiter", client, algorithm.keySuffix()));
			policies.add(new WindowPolicy(algorithm, LIMIT, WINDOW));
		}
		LimitScript.Arguments arguments = LimitScript.arguments(policies, 1, "");
		try {
			// a blocking wait, once, at start-up: nothing is served before it ends
			Long decided = this.script.load()
				.thenMany(Flux.range(0, DECISIONS)
					// not through the Redis guard: a cold first call may outlast its bounds, which is what
					// this is for, and must not count as a failed decision; maxWait bounds the whole
					.flatMap(i -> this.script.decide(keys, arguments).onErrorResume(error -> Mono.empty()), CONCURRENCY))
				.count()
				.block(this.maxWait);
			logger.debug("Warmed up with " + decided + " decisions in "
					+ Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms");
		}
		catch (RuntimeException ex) {
			logger.warn("Rate-limit decisions not warmed up (" + ex + "); routes apply their fail-mode until "
					+ "Redis answers");
		}
	}

	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE - 1;
	}

}
