package io.windowlimiter.gateway;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.windowlimiter.gateway.algorithm.Decision;
import org.jspecify.annotations.Nullable;

/**
 * Remembers, per Redis key, that Redis denied a client until some time, and answers that client's
 * requests until then without calling Redis: a client flooding far over its limit then costs no Redis
 * round trip. It never allows: a denial stays true until its Retry-After whatever other gateway
 * instances do meanwhile, since their requests can only add to the counts. Bounded in size (least
 * recently used go first); entries vanish when their denial ends.
 */
public class DenyCache {

	private final Cache<String, Long> deniedUntilNanos;

	private final LongSupplier nanoTime;

	/**
	 * @param maxClients how many denied clients to hold at most
	 * @param nanoTime this instance's monotonic clock, {@code System::nanoTime} outside tests
	 */
	public DenyCache(long maxClients, LongSupplier nanoTime) {
		this.nanoTime = nanoTime;
		this.deniedUntilNanos = Caffeine.newBuilder()
			.maximumSize(maxClients)
			.expireAfter(new UntilDenialEnds(nanoTime))
			.ticker(nanoTime::getAsLong)
			.build();
	}

	/** The denial still in force for {@code key}, or null when Redis must decide. */
	public @Nullable Decision denial(String key) {
		Long until = this.deniedUntilNanos.getIfPresent(key);
		if (until == null) {
			return null;
		}
		long leftMillis = TimeUnit.NANOSECONDS.toMillis(until - this.nanoTime.getAsLong() + 999_999);
		return (leftMillis > 0) ? new Decision(false, 0, leftMillis, leftMillis) : null;
	}

	/** Remembers a denial Redis gave; allowed decisions are not kept. */
	public void remember(String key, Decision decision) {
		if (!decision.allowed() && decision.retryAfterMillis() > 0) {
			long until = this.nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(decision.retryAfterMillis());
			this.deniedUntilNanos.put(key, until);
		}
	}

	/** Forgets every denial, e.g. when a route's limit changes. */
	public void clear() {
		this.deniedUntilNanos.invalidateAll();
	}

	private record UntilDenialEnds(LongSupplier nanoTime) implements Expiry<String, Long> {

		@Override
		public long expireAfterCreate(String key, Long until, long currentTime) {
			return Math.max(0, until - currentTime);
		}

		@Override
		public long expireAfterUpdate(String key, Long until, long currentTime, long currentDuration) {
			return Math.max(0, until - currentTime);
		}

		@Override
		public long expireAfterRead(String key, Long until, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
