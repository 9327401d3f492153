package io.windowlimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.key.RedisKeys;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Runs the decision path before the web server takes its first request: connects to Redis, loads the
 * scripts, decides a few hundred requests of a throwaway client with every algorithm, and settles and
 * releases some of them, so that class loading, the connection and the first compilations are paid
 * here and not by the first clients. Without it the first decisions of a fresh instance were the
 * slowest it ever made (measured: several hundred ms on two busy cores); without the settles, a fresh
 * instance's first requests that settle (count-statuses, costs from the response, LLM calls) came
 * 100 to 200 ms after the others of its first burst.
 *
 * <p>Started in the phase just before the web server's. Start-up waits for it at most
 * {@code maxWait}: if Redis is not there, the application starts anyway and routes apply their
 * fail-mode until it is.
 */
public class DecisionWarmUp implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(DecisionWarmUp.class);

	private static final int DECISIONS = 400;

	private static final int CONCURRENCY = 16;

	/** Of the decisions, those also settled (reserved 2, cost 1) and released. */
	private static final int SETTLED = 100;

	/** Generous for every algorithm: the warm-up client must never be denied, its keys vanish in a second. */
	private static final long LIMIT = 10_000;

	private static final Duration WINDOW = Duration.ofSeconds(1);

	private final LimitScript script;

	private final Duration maxWait;

	private final String addresses;

	private volatile boolean running;

	public DecisionWarmUp(LimitScript script, Duration maxWait) {
		this(script, maxWait, "Redis");
	}

	/** @param addresses where Redis is looked for, named when it does not answer (see {@link #addresses}) */
	public DecisionWarmUp(LimitScript script, Duration maxWait, String addresses) {
		this.script = script;
		this.maxWait = maxWait;
		this.addresses = addresses;
	}

	/**
	 * What a connection factory tries: {@code host:port}, a Sentinel master and its sentinels, or the
	 * cluster's seed nodes. A wrong port is the commonest set-up mistake; the warning should show it.
	 */
	public static String addresses(@Nullable Object connectionFactory) {
		if (!(connectionFactory instanceof LettuceConnectionFactory factory)) {
			return "Redis";
		}
		if (factory.getClusterConfiguration() != null) {
			return "cluster nodes " + nodes(factory.getClusterConfiguration().getClusterNodes());
		}
		RedisSentinelConfiguration sentinel = factory.getSentinelConfiguration();
		if (sentinel != null) {
			String master = (sentinel.getMaster() != null) ? sentinel.getMaster().getName() : "?";
			return "sentinel master '" + master + "' via " + nodes(sentinel.getSentinels());
		}
		if (factory.getSocketConfiguration() != null) {
			return "socket " + factory.getSocketConfiguration().getSocket();
		}
		return factory.getHostName() + ":" + factory.getPort();
	}

	private static String nodes(Collection<RedisNode> nodes) {
		return nodes.stream().map(node -> node.getHost() + ":" + node.getPort()).collect(Collectors.joining(", "));
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
		// the concurrency limit records every warm-up decision by one id: one slot, expiring after WINDOW
		LimitScript.Arguments arguments = LimitScript.arguments(policies, 1, "").withRequestId(client);
		LimitScript.Arguments reserving = LimitScript.arguments(policies, 2, "").withRequestId(client);
		String markers = RedisKeys.settledMarkers(keys.get(0), System.currentTimeMillis() / 60_000);
		try {
			// a blocking wait, once, at start-up: nothing is served before it ends
			Long decided = this.script.load()
				.thenMany(Flux.range(0, DECISIONS)
					// not through the Redis guard: a cold first call may outlast its bounds, which is what
					// this is for, and must not count as a failed decision; maxWait bounds the whole
					.flatMap(i -> (i < SETTLED) ? settled(keys, policies, reserving, markers, client + "-" + i)
							: this.script.decide(keys, arguments).onErrorResume(error -> Mono.empty()), CONCURRENCY))
				.count()
				.block(this.maxWait);
			logger.debug("Warmed up with " + decided + " decisions in "
					+ Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms");
		}
		catch (RuntimeException ex) {
			logger.warn("Rate-limit decisions not warmed up: Redis at " + this.addresses + " did not answer within "
					+ this.maxWait.toSeconds() + " s (" + ex + "). Until it does, every route applies its fail-mode: "
					+ "'open' (the default) lets requests through unlimited, 'closed' refuses them with 429. Check "
					+ "spring.data.redis.*.");
		}
	}

	/** One decision reserving 2, settled to 1, and its concurrency slot released, as a request that settles is. */
	private Mono<Object> settled(List<String> keys, List<WindowPolicy> policies, LimitScript.Arguments reserving,
			String markers, String id) {
		return this.script.decide(keys, reserving)
			.flatMap(verdict -> this.script
				.settle(keys, markers, id, policies,
						verdict.decisions().stream().map(decision -> decision.resetMillis()).toList(), verdict.now(),
						2, 1, "")
				// only the concurrency limit's key holds slots: ZREM on the others' keys is a WRONGTYPE error reply
				.then(this.script.release(List.of(keys.get(Algorithm.CONCURRENCY.ordinal())), id)))
			.cast(Object.class)
			.onErrorResume(error -> Mono.empty());
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
		return SmartLifecycle.DEFAULT_PHASE - 2048 - 1; // just before Boot's web server (its START_STOP_LIFECYCLE_PHASE), named so the core needs no web module
	}

}
