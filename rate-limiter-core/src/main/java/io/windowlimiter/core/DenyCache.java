package io.windowlimiter.core;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.policy.CompiledPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Remembers, per Redis key, that Redis denied a client until some time, and answers that client's
 * requests until then without calling Redis: a client flooding far over its limit then costs no Redis
 * round trip. It never allows: a denial stays true until its Retry-After whatever other gateway
 * instances do meanwhile, since their requests can only add to the counts. A denial holds for requests
 * costing at least what the denied one did: one costing less may fit what is left, so Redis decides it
 * (costs vary per request with the {@code WindowRateLimit} filter's {@code cost-from-header}). Bounded in size (least
 * recently used go first); entries vanish when their denial ends. Callers key it by what is already
 * bounded (the limiter: route, plan and the client's hashed Redis key, never the raw client key), so
 * the count bounds the bytes too: about 300 bytes an entry, 30 MB at 100,000.
 */
public class DenyCache {

	private final Cache<String, Entry> denials;

	private final LongSupplier nanoTime;

	/**
	 * @param maxClients how many denied clients to hold at most
	 * @param nanoTime this instance's monotonic clock, {@code System::nanoTime} outside tests
	 */
	public DenyCache(long maxClients, LongSupplier nanoTime) {
		this.nanoTime = nanoTime;
		this.denials = Caffeine.newBuilder()
			.maximumSize(maxClients)
			.expireAfter(new UntilDenialEnds())
			.ticker(nanoTime::getAsLong)
			.build();
	}

	/**
	 * What the deny cache keys a client by: route and plan, then the client's first Redis key, which
	 * {@code RedisKeys} has hashed if the client key was long or odd. So an entry's size is bounded whatever
	 * a client sends (an {@code X-API-Key} of 8 KB costs what a short one does).
	 * @param keys the client's keys under the policy ({@link CompiledPolicy#keysFor})
	 */
	static String keyOf(CompiledPolicy policy, List<String> keys) {
		return policy.denyPrefix + keys.get(0);
	}

	/**
	 * The denial still in force for {@code key}, whatever the request costs, or null when Redis must decide.
	 * @return which of the route's limits denied, and the decision to answer with now
	 */
	public @Nullable Denial denial(String key) {
		return denial(key, Long.MAX_VALUE);
	}

	/**
	 * The denial still in force for a request of {@code key} costing {@code cost}, or null when Redis must
	 * decide: none is in force, or the request costs less than the one denied and may fit.
	 * @return which of the route's limits denied, and the decision to answer with now
	 */
	public @Nullable Denial denial(String key, long cost) {
		Entry entry = this.denials.getIfPresent(key);
		if (entry == null || cost < entry.cost()) {
			return null;
		}
		long now = this.nanoTime.getAsLong();
		long leftMillis = TimeUnit.NANOSECONDS.toMillis(entry.untilNanos() - now + 999_999);
		return (leftMillis > 0)
				? new Denial(entry.limitIndex(), new Decision(false, entry.remaining(), leftMillis, leftMillis),
						TimeUnit.NANOSECONDS.toMillis(now - entry.sinceNanos()))
				: null;
	}

	/** Remembers that Redis denied {@code key} by limit {@code limitIndex} for {@code retryAfterMillis}. */
	public void remember(String key, int limitIndex, long retryAfterMillis) {
		remember(key, limitIndex, 0, retryAfterMillis);
	}

	/**
	 * Remembers that Redis denied {@code key} by limit {@code limitIndex} for {@code retryAfterMillis}, with
	 * {@code remaining} left on that limit (more than 0 when a request costs more than what is left).
	 */
	public void remember(String key, int limitIndex, long remaining, long retryAfterMillis) {
		remember(key, limitIndex, remaining, retryAfterMillis, 1);
	}

	/**
	 * Remembers that Redis denied a request of {@code key} costing {@code cost} by limit {@code limitIndex}
	 * for {@code retryAfterMillis}, with {@code remaining} left on that limit: requests costing at least
	 * {@code cost} are denied until then.
	 */
	public void remember(String key, int limitIndex, long remaining, long retryAfterMillis, long cost) {
		if (retryAfterMillis > 0) {
			long now = this.nanoTime.getAsLong();
			this.denials.put(key, new Entry(limitIndex, remaining, now + TimeUnit.MILLISECONDS.toNanos(retryAfterMillis),
					cost, now));
		}
	}

	/**
	 * Forgets the denial of {@code key} if it was by a limit {@code byLimit} accepts (by position): a refund on
	 * those limits may let the client in before the denial ends; one by another limit stays as true as it was.
	 */
	public void forget(String key, IntPredicate byLimit) {
		this.denials.asMap().computeIfPresent(key, (k, entry) -> byLimit.test(entry.limitIndex()) ? null : entry);
	}

	/** Forgets the denial of {@code key}, e.g. when an operator resets that client. */
	public void forget(String key) {
		this.denials.invalidate(key);
	}

	/** Forgets every denial, e.g. when a route's limit changes. */
	public void clear() {
		this.denials.invalidateAll();
	}

	/**
	 * A denial in force.
	 * @param limitIndex which of the route's limits denied
	 * @param decision what to answer with now
	 * @param ageMillis how long ago Redis denied: what was left then may have grown since where the route gives
	 * back (an LLM call settled below its estimate on another instance)
	 */
	public record Denial(int limitIndex, Decision decision, long ageMillis) {
	}

	/**
	 * What is remembered: which limit denied, what Redis said was left, until when on this cache's clock, what
	 * the denied request cost, and when it was remembered.
	 */
	private record Entry(int limitIndex, long remaining, long untilNanos, long cost, long sinceNanos) {
	}

	private static final class UntilDenialEnds implements Expiry<String, Entry> {

		@Override
		public long expireAfterCreate(String key, Entry entry, long currentTime) {
			return Math.max(0, entry.untilNanos() - currentTime);
		}

		@Override
		public long expireAfterUpdate(String key, Entry entry, long currentTime, long currentDuration) {
			return Math.max(0, entry.untilNanos() - currentTime);
		}

		@Override
		public long expireAfterRead(String key, Entry entry, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
