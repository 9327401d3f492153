package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fail-mode {@code local} on an LLM route, with a real redis-server of this test's own killed: each limit is
 * charged its own cost, the call's token estimate in the token limit and 1 in the request limit, as Redis would.
 * Before, the estimate was the cost of every limit: a request limit of 5 a minute (this instance's share) took
 * min(300, 5) per call, about one call a window.
 */
class LlmFailModeLocalTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private RedisProcess redis;

	private LettuceConnectionFactory connections;

	private RedisGuard guard;

	private RateLimiterCore core;

	private final String client = "llm-local-" + UUID.randomUUID();

	@BeforeEach
	void start() {
		this.redis = RedisProcess.launch();
		this.connections = new LettuceConnectionFactory("127.0.0.1", this.redis.port());
		this.connections.afterPropertiesSet();
		this.connections.start();
		this.guard = new RedisGuard(Duration.ofMillis(600), Duration.ofMillis(400), Duration.ofSeconds(10));
		this.core = RateLimiterCore.of(new LimitScript(new ReactiveStringRedisTemplate(this.connections)), this.guard,
				new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
				Clock.systemUTC());
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.fail-mode", "local");
		args.put("window-rate-limiter.limits[0].limit", "100000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].limit", "5");
		args.put("window-rate-limiter.limits[1].window", "1m");
		this.core.configure("chat", args, SlotRelease.ALWAYS, true);
	}

	@AfterEach
	void stop() throws Exception {
		this.guard.close();
		this.connections.destroy();
		this.redis.close();
	}

	@Test
	void whileRedisIsDownCallsWithinTheRequestLimitsShareArePassedAndTheNextRefused() {
		assertThat(this.core.admitTokens("chat", this.client, 300, Mono.empty()).block(TIMEOUT).passes())
			.as("Redis up: decided there").isTrue();
		this.redis.kill();
		List<Boolean> passed = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			long started = System.nanoTime();
			Admission admission = this.core.admitTokens("chat", "down-" + this.client, 300, Mono.empty()).block(TIMEOUT);
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("within the bound").isLessThan(Duration.ofSeconds(1));
			assertThat(admission.reservation()).as("nothing reserved in Redis").isNull();
			passed.add(admission.passes());
		}
		assertThat(passed).as("5 calls of 300 tokens in the request limit's 5, the sixth refused by it")
			.containsExactly(true, true, true, true, true, false);
		Admission refused = this.core.admitTokens("chat", "down-" + this.client, 300, Mono.empty()).block(TIMEOUT);
		assertThat(refused.violated()).containsExactly("chat-1");
		// and the token limit takes the estimate, capped at its share, as Redis would
		Admission tokens = this.core.admitTokens("chat", "tokens-" + this.client, 100_001, Mono.empty()).block(TIMEOUT);
		assertThat(tokens.passes()).as("an estimate above the token share is capped at it, as in Redis").isTrue();
		assertThat(this.core.admitTokens("chat", "tokens-" + this.client, 1, Mono.empty()).block(TIMEOUT).passes())
			.as("the token share used up by that call").isFalse();
	}

}
