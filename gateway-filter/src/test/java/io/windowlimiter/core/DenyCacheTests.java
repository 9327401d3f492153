package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import io.windowlimiter.gateway.WindowRateLimiter;

class DenyCacheTests {

	private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

	private final DenyCache cache = new DenyCache(1_000, this.nanos::get);

	@Test
	void aDenialIsAnsweredLocallyUntilItsRetryAfterAndNeverAllows() {
		this.cache.remember("k", 1, 5_000);
		assertThat(this.cache.denial("k").limitIndex()).isEqualTo(1);
		assertThat(this.cache.denial("k").decision()).isEqualTo(new Decision(false, 0, 5_000, 5_000));
		this.nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(3_500));
		assertThat(this.cache.denial("k").decision()).isEqualTo(new Decision(false, 0, 1_500, 1_500));
		this.nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(1_500));
		assertThat(this.cache.denial("k")).isNull();
	}

	@Test
	void aDenialHoldsForRequestsCostingAtLeastTheDeniedOne() {
		this.cache.remember("k", 0, 2, 5_000, 3);
		assertThat(this.cache.denial("k", 3)).isNotNull();
		assertThat(this.cache.denial("k", 7)).isNotNull();
		assertThat(this.cache.denial("k", 2)).as("may fit the 2 left: Redis decides").isNull();
		assertThat(this.cache.denial("k", 1)).isNull();
		assertThat(this.cache.denial("k")).as("whatever it costs").isNotNull();
	}

	@Test
	void aZeroWaitIsNotKept() {
		this.cache.remember("k", 0, 0);
		assertThat(this.cache.denial("k")).isNull();
	}

	@Test
	void theLimiterSkipsRedisForADeniedClient() {
		ReactiveStringRedisTemplate redis = RedisTestServer.get().template();
		WindowRateLimiter limiter = WindowRateLimiter.of(new LimitScript(redis),
				new RedisGuard(Duration.ofMillis(600), Duration.ofMillis(400), Duration.ofSeconds(10)),
				this.cache, new LocalWindowLimiter(10), Clock.systemUTC());
		limiter.onApplicationEvent(new FilterArgsEvent(this, "deny-cache", Map.of("window-rate-limiter.algorithm",
				"fixed-window", "window-rate-limiter.limit", "1", "window-rate-limiter.window", "366d")));
		String client = "client-" + System.nanoTime();
		assertThat(limiter.isAllowed("deny-cache", client).block().isAllowed()).isTrue();
		Response denied = limiter.isAllowed("deny-cache", client).block();
		assertThat(denied.isAllowed()).isFalse();

		// with the Redis counter gone, only a local answer can still deny
		redis.delete(RedisKeys.of("deny-cache", client, "fl")).block();
		Response local = limiter.isAllowed("deny-cache", client).block();
		assertThat(local.isAllowed()).isFalse();
		assertThat(local.getHeaders()).containsEntry("X-RateLimit-Remaining", "0").containsKey("Retry-After");
		assertThat(Long.parseLong(local.getHeaders().get("Retry-After")))
			.isLessThanOrEqualTo(Long.parseLong(denied.getHeaders().get("Retry-After")));

		// once the denial has run out, Redis decides again
		this.nanos.addAndGet(Duration.ofDays(367).toNanos());
		assertThat(limiter.isAllowed("deny-cache", client).block().isAllowed()).isTrue();
	}

	/** A request costing 4 of a limit of 5 leaves 1: Redis says so, and so does the cached denial. */
	@Test
	void aCachedDenialReportsTheRemainingRedisReported() {
		ReactiveStringRedisTemplate redis = RedisTestServer.get().template();
		LimitScript script = new LimitScript(redis);
		// a cold first call (class loading on a busy machine) must not outlast the guard's bound
		script.load().block(Duration.ofSeconds(10));
		WindowRateLimiter limiter = WindowRateLimiter.of(script,
				new RedisGuard(Duration.ofMillis(600), Duration.ofMillis(400), Duration.ofSeconds(10)),
				this.cache, new LocalWindowLimiter(10), Clock.systemUTC());
		limiter.onApplicationEvent(new FilterArgsEvent(this, "costly", Map.of("window-rate-limiter.algorithm",
				"fixed-window", "window-rate-limiter.limit", "5", "window-rate-limiter.window", "366d",
				"window-rate-limiter.cost", "4")));
		String client = "client-" + System.nanoTime();
		assertThat(limiter.isAllowed("costly", client).block().isAllowed()).isTrue();
		Response denied = limiter.isAllowed("costly", client).block();
		assertThat(denied.isAllowed()).isFalse();
		assertThat(denied.getHeaders()).containsEntry("X-RateLimit-Remaining", "1");
		// with the Redis counter gone, only the deny cache can still deny
		redis.delete(RedisKeys.of("costly", client, "f")).block();
		Response cached = limiter.isAllowed("costly", client).block();
		assertThat(cached.isAllowed()).isFalse();
		assertThat(cached.getHeaders()).containsEntry("X-RateLimit-Remaining", "1");
	}

}
