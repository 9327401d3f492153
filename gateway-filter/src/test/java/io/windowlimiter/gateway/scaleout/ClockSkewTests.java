package io.windowlimiter.gateway.scaleout;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;

import io.windowlimiter.gateway.algorithm.Algorithm;
import io.windowlimiter.gateway.algorithm.Decision;
import io.windowlimiter.gateway.algorithm.LimitScript;
import io.windowlimiter.gateway.algorithm.WindowPolicy;
import io.windowlimiter.gateway.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateway instances whose clocks are 20 s apart (one 10 s slow, one 10 s fast) decide alike,
 * because a decision takes its time from the Redis server ({@code TIME} in the script), never from
 * the instance: no instance clock is an input of the decision path at all. The control shows what
 * the same traffic does when each instance passes its own clock, as a limiter timed on the gateway
 * would: the instances disagree about windows and Retry-After.
 *
 * <p>The instances are two connection factories each with their own algorithm objects, as two
 * gateway processes would have; one JVM cannot give two application contexts different system
 * clocks, so the skew is given to each instance as a {@link Clock}.
 */
class ClockSkewTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Duration SKEW = Duration.ofSeconds(10);

	private final Instance slow = new Instance(Clock.offset(Clock.systemUTC(), SKEW.negated()));

	private final Instance fast = new Instance(Clock.offset(Clock.systemUTC(), SKEW));

	private final String client = UUID.randomUUID().toString();

	@AfterEach
	void stop() {
		this.slow.close();
		this.fast.close();
	}

	@Test
	void onTheRedisClockSkewedInstancesAgreeOnRetryAfter() {
		WindowPolicy twoPerMinute = new WindowPolicy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1));
		String key = RedisKeys.of("skew", this.client, Algorithm.SLIDING_LOG.keySuffix());
		assertThat(this.slow.script.decideOne(key, twoPerMinute, 1, "").block(TIMEOUT).allowed()).isTrue();
		assertThat(this.fast.script.decideOne(key, twoPerMinute, 1, "").block(TIMEOUT).allowed()).isTrue();
		Decision denied = this.fast.script.decideOne(key, twoPerMinute, 1, "").block(TIMEOUT);
		// the slow instance's request leaves the window a minute after it was made, on one clock
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterMillis()).isBetween(55_000L, 60_000L);
		Decision deniedToo = this.slow.script.decideOne(key, twoPerMinute, 1, "").block(TIMEOUT);
		assertThat(Math.abs(deniedToo.retryAfterMillis() - denied.retryAfterMillis())).isLessThan(5_000);
	}

	@Test
	void onTheirOwnClocksTheSameInstancesWouldDisagree() {
		// the control: each instance passes its own clock, as a limiter timed on the gateway would
		WindowPolicy twoPerMinute = new WindowPolicy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1));
		String key = RedisKeys.of("skew-local", this.client, Algorithm.SLIDING_LOG.keySuffix());
		this.slow.script.decideOne(key, twoPerMinute, 1, Long.toString(this.slow.clock.millis())).block(TIMEOUT);
		this.fast.script.decideOne(key, twoPerMinute, 1, Long.toString(this.fast.clock.millis())).block(TIMEOUT);
		Decision denied = this.fast.script.decideOne(key, twoPerMinute, 1, Long.toString(this.fast.clock.millis()))
			.block(TIMEOUT);
		// the slow instance's request seems 20 s old to the fast one: Retry-After is 20 s short
		assertThat(denied.retryAfterMillis()).isBetween(35_000L, 41_000L);
	}

	@Test
	void onTheirOwnClocksInstancesStraddlingAWindowEdgeWouldLetTwiceTheLimitThrough() {
		// true time 55 s into a minute: the slow instance is still in this minute, the fast one in the next
		Instant trueTime = Instant.parse("2026-01-01T00:00:55Z");
		Clock slowClock = Clock.fixed(trueTime.minus(SKEW), ZoneOffset.UTC);
		Clock fastClock = Clock.fixed(trueTime.plus(SKEW), ZoneOffset.UTC);
		WindowPolicy tenPerMinute = new WindowPolicy(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
		String key = RedisKeys.of("skew-edge", this.client, Algorithm.FIXED_WINDOW.keySuffix());
		int allowed = 0;
		for (int i = 0; i < 20; i++) {
			Decision decision = this.slow.script.decideOne(key, tenPerMinute, 1, Long.toString(slowClock.millis()))
				.block(TIMEOUT);
			allowed += decision.allowed() ? 1 : 0;
		}
		for (int i = 0; i < 20; i++) {
			Decision decision = this.fast.script.decideOne(key, tenPerMinute, 1, Long.toString(fastClock.millis()))
				.block(TIMEOUT);
			allowed += decision.allowed() ? 1 : 0;
		}
		// on one clock these 40 requests fall into one window and 10 pass
		assertThat(allowed).isEqualTo(20);
	}

	/** One gateway instance: its own connections, script and clock. */
	private static final class Instance implements AutoCloseable {

		final Clock clock;

		final LettuceConnectionFactory connections;

		final LimitScript script;

		Instance(Clock clock) {
			this.clock = clock;
			RedisTestServer redis = RedisTestServer.get();
			this.connections = new LettuceConnectionFactory(redis.host(), redis.port());
			this.connections.afterPropertiesSet();
			this.connections.start();
			ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(this.connections);
			this.script = new LimitScript(template);
		}

		@Override
		public void close() {
			this.connections.destroy();
		}

	}

}
