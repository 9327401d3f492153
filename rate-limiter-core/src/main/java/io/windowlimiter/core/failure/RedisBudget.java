package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * What is left of one answer's time for Redis: {@code redis-timeout} in all, shared by every Redis call made
 * before the response is committed (the decisions of each limiter filter of the request, a settle that delays
 * the commit). The {@link RedisGuard} bounds a call made {@linkplain #bound within} a budget by what is left of
 * it, and a call made once it is spent fails at once, sending nothing: so two filters and a settle wait no
 * longer for Redis, in all, than one decision may. Not for calls after the response (a settle when the exchange
 * ends, a release of slots): each has the guard's own bound.
 */
public final class RedisBudget {

	private static final Object KEY = RedisBudget.class;

	private final AtomicLong leftNanos;

	RedisBudget(long nanos) {
		this.leftNanos = new AtomicLong(nanos);
	}

	/** A budget of this length, for tests and adapters without a guard at hand. */
	public static RedisBudget of(Duration length) {
		return new RedisBudget(length.toNanos());
	}

	/** What is left, in nanoseconds; 0 or less once spent. */
	public long leftNanos() {
		return this.leftNanos.get();
	}

	/** The call, bounded by what is left of this budget when the guard lets it go, and spending from it. */
	public <T> Mono<T> bound(Mono<T> call) {
		return call.contextWrite(context -> context.put(KEY, this));
	}

	/**
	 * Waits for the call at most what is left of the budget, spending it meanwhile: the returned Mono completes
	 * when the call ends or the budget is spent, whichever comes first. The call goes on either way (it is
	 * subscribed here, once): a settle that cannot finish in what is left lands after the response, bounded by
	 * the guard as any call.
	 */
	public Mono<Void> waitAtMost(Mono<?> call) {
		long left = leftNanos();
		Mono<?> running = call.cache();
		running.subscribe(value -> {
		}, error -> {
		});
		if (left <= 0) {
			return Mono.empty();
		}
		return Mono.defer(() -> {
			long start = System.nanoTime();
			return running.then()
				.onErrorResume(error -> Mono.empty())
				.timeout(Duration.ofNanos(left), Mono.empty())
				.doFinally(signal -> spend(System.nanoTime() - start));
		});
	}

	void spend(long nanos) {
		this.leftNanos.addAndGet(-nanos);
	}

	static @Nullable RedisBudget in(ContextView context) {
		return context.getOrDefault(KEY, null);
	}

}
