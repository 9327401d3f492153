package io.windowlimiter.core.operations;

import java.time.Duration;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.plan.PlanAssignments;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.ReactiveRedisMessageListenerContainer;

/**
 * Tells every gateway instance of an operator's change to a client's limits, over a Redis pub/sub
 * channel, and applies what others publish: after an assignment, override or clear the instance reloads
 * the assignments at once (not at its next poll), and in every case it forgets its cached denial of that
 * client on that target, so the next request is decided by Redis (with the new counts) instead of being refused
 * from the deny cache for the rest of an old Retry-After. Delivery takes a Redis round trip, well inside
 * a second. Pub/sub keeps nothing for an instance that is not listening: one cut off from Redis at that
 * moment keeps its cached denials until their Retry-After ends (it cannot ask Redis meanwhile anyway).
 */
public class ChangeBroadcast implements SmartLifecycle {

	/** The channel every instance listens on. */
	public static final String CHANNEL = "wrl:changes";

	private static final Log logger = LogFactory.getLog(ChangeBroadcast.class);

	private static final ChannelTopic TOPIC = ChannelTopic.of(CHANNEL);

	private final ReactiveStringRedisTemplate redis;

	private final RateLimiterCore limiter;

	private final @Nullable PlanAssignments assignments;

	private final Duration decisionBound;

	private @Nullable Disposable listening;

	/**
	 * @param redis publishes, and its connection factory opens the connection that listens
	 * @param limiter whose deny cache forgets the clients others reset
	 * @param assignments reloaded when another instance changed a client's plan or override; null for none
	 * @param decisionBound the longest a decision can take ({@code window-rate-limiter.redis-timeout})
	 */
	public ChangeBroadcast(ReactiveStringRedisTemplate redis, RateLimiterCore limiter,
			@Nullable PlanAssignments assignments, Duration decisionBound) {
		this.redis = redis;
		this.limiter = limiter;
		this.assignments = assignments;
		this.decisionBound = decisionBound;
	}

	/**
	 * Publishes a change to every listening instance, this one included.
	 * @return how many instances received it (on a Redis Cluster: those listening on the node that took it)
	 */
	public Mono<Long> publish(LimitChange change) {
		return this.redis.convertAndSend(CHANNEL, change.encode());
	}

	/** Applies a change made through any instance to this one. */
	void apply(LimitChange change) {
		if (change.changesAssignment() && this.assignments != null) {
			// at once rather than at the next poll; the poll still catches what a lost message would miss
			this.assignments.refresh()
				.timeout(this.decisionBound.plusSeconds(1))
				.doOnError(error -> logger.warn("Reloading rate-limit assignments after a " + change.type() + " on '"
						+ change.target() + "' failed; the next poll retries: " + error))
				.onErrorResume(error -> Mono.empty())
				.doFinally(signal -> this.limiter.forgetDenial(change.target(), change.client()))
				.subscribe();
		}
		// whatever changed about the client, a denial cached under the old state no longer holds
		this.limiter.forgetDenial(change.target(), change.client());
		// A decision in flight may have read the old counts and cache its denial after this: every decision
		// ends within the bound, so forgetting once more after it closes that gap. Forgetting a fresh denial
		// costs one Redis round trip, nothing more.
		Mono.delay(this.decisionBound.plusMillis(100))
			.subscribe(tick -> this.limiter.forgetDenial(change.target(), change.client()));
		if (logger.isDebugEnabled()) {
			logger.debug("Applied " + change.type() + " of client '" + LimitChange.printable(change.client())
					+ "' on '" + change.target() + "': its cached denial is forgotten");
		}
	}

	private void receive(String message) {
		LimitChange change = LimitChange.decode(message);
		if (change != null) {
			this.apply(change);
		}
		else {
			logger.warn("Ignored a message on " + CHANNEL + " that is not a rate-limit change: " + message);
		}
	}

	@Override
	public synchronized void start() {
		if (this.listening != null) {
			return;
		}
		// The container connects in its constructor, blocking: made off the caller's thread, and again after
		// a failure, so a gateway starts while Redis is away and listens once it is back. Lettuce
		// resubscribes by itself after a reconnect; the retry covers a subscription that fails outright.
		this.listening = Flux
			.usingWhen(
					Mono.fromCallable(() -> new ReactiveRedisMessageListenerContainer(this.redis.getConnectionFactory()))
						.subscribeOn(Schedulers.boundedElastic()),
					container -> container.receive(TOPIC), ReactiveRedisMessageListenerContainer::destroyLater)
			.doOnError(error -> logger.warn("Listening on Redis channel " + CHANNEL + " failed, retrying: " + error))
			.retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofSeconds(1)).maxBackoff(Duration.ofSeconds(30)))
			.subscribe(message -> receive(message.getMessage()));
	}

	/** Listening before the web server takes requests, with the assignments loaded in the same phase. */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE - 2048 - 1; // just before Boot's web server (its START_STOP_LIFECYCLE_PHASE), named so the core needs no web module
	}

	@Override
	public synchronized void stop() {
		if (this.listening != null) {
			this.listening.dispose();
			this.listening = null;
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.listening != null;
	}

}
