package io.windowlimiter.gateway.failure;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.windowlimiter.gateway.DecisionWarmUp;
import io.windowlimiter.gateway.DenyCache;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.algorithm.LimitScript;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis killed, hung (SIGSTOP) and slow (CLIENT PAUSE), with a real redis-server process of this
 * test's own. Whatever Redis does, every answer comes within the bound, each route does what its
 * fail-mode says, and limiting from Redis resumes within seconds of Redis coming back.
 */
class RedisFaultTests {

	/** The defaults users get (window-rate-limiter.redis-timeout and redis-stall-timeout). */
	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(400);

	/** What the defaults promise; Lettuce's own command timeout is 60 s. */
	private static final Duration BOUND = Duration.ofSeconds(1);

	private static final Duration RECOVERY = Duration.ofSeconds(10);

	private RedisProcess redis;

	private LettuceConnectionFactory connectionFactory;

	private RedisGuard guard;

	private WindowRateLimiter limiter;

	private long maxLatencyNanos;

	private int quickAnswers;

	@BeforeEach
	void start() {
		this.redis = RedisProcess.launch();
		this.connectionFactory = new LettuceConnectionFactory("127.0.0.1", this.redis.port());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(this.connectionFactory);
		this.guard = new RedisGuard(TIMEOUT, STALL, Duration.ofSeconds(10));
		LimitScript script = new LimitScript(template);
		this.limiter = WindowRateLimiter.of(script, this.guard, new DenyCache(1_000, System::nanoTime),
				new LocalWindowLimiter(1_000), Clock.systemUTC());
		// as the application does before it serves: connect, load the script, warm the path
		new DecisionWarmUp(script, Duration.ofSeconds(10)).start();
		route("open", "open", "1");
		route("closed", "closed", "1");
		route("local", "local", "2");
	}

	private void route(String id, String failMode, String instances) {
		this.limiter.onApplicationEvent(new FilterArgsEvent(this, id,
				Map.of("window-rate-limiter.algorithm", "sliding-window-counter", "window-rate-limiter.limit", "10",
						"window-rate-limiter.window", "366d", "window-rate-limiter.fail-mode", failMode,
						"window-rate-limiter.instances", instances)));
	}

	@AfterEach
	void stop() {
		this.guard.close();
		this.connectionFactory.destroy();
		this.redis.close();
	}

	private Response decide(String route, String client) {
		long start = System.nanoTime();
		Response response = this.limiter.isAllowed(route, client).block(Duration.ofSeconds(30));
		long latency = System.nanoTime() - start;
		this.maxLatencyNanos = Math.max(this.maxLatencyNanos, latency);
		this.quickAnswers += (latency < STALL.toNanos() / 4) ? 1 : 0;
		return response;
	}

	/** A response decided by Redis carries this route's full limit (10); the fail-modes answer otherwise. */
	private boolean decidedByRedis(String route, String client) {
		return "10".equals(decide(route, client).getHeaders().get("X-RateLimit-Limit"));
	}

	private void assertEveryFailModeAppliesWithinTheBound(String client) {
		this.maxLatencyNanos = 0;
		this.quickAnswers = 0;
		int localAllowed = 0;
		for (int i = 0; i < 30; i++) {
			Response open = decide("open", client);
			assertThat(open.isAllowed()).as("fail-mode open allows").isTrue();
			assertThat(open.getHeaders()).as("fail-mode open claims no quota").isEmpty();

			Response closed = decide("closed", client);
			assertThat(closed.isAllowed()).as("fail-mode closed denies").isFalse();
			assertThat(closed.getHeaders()).containsEntry("Retry-After", "1").containsEntry("X-RateLimit-Remaining", "0");

			Response local = decide("local", client);
			assertThat(local.getHeaders()).as("fail-mode local enforces limit / instances")
				.containsEntry("X-RateLimit-Limit", "5");
			localAllowed += local.isAllowed() ? 1 : 0;
		}
		assertThat(localAllowed).isEqualTo(5);
		assertThat(Duration.ofNanos(this.maxLatencyNanos)).as("slowest answer while Redis fails")
			.isLessThan(BOUND);
		assertThat(this.quickAnswers).as("answers that did not wait on the absent Redis, of 90").isGreaterThan(45);
	}

	private static void awaitWithin(Duration limit, BooleanSupplier condition, String what) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as(what + " within " + limit).isLessThan(deadline);
		}
	}

	@Test
	void redisKilledAndRestartedOnTheSamePort() {
		assertThat(decidedByRedis("open", "alice")).isTrue();
		this.redis.kill();
		assertEveryFailModeAppliesWithinTheBound("bob");
		this.redis.start();
		awaitWithin(RECOVERY, () -> decidedByRedis("closed", "carol") && !this.guard.isStalled(),
				"limiting resumes after a restart");
	}

	@Test
	void redisHangingThenResuming() {
		assertThat(decidedByRedis("open", "alice")).isTrue();
		this.redis.freeze();
		try {
			assertEveryFailModeAppliesWithinTheBound("bob");
		}
		finally {
			this.redis.thaw();
		}
		awaitWithin(RECOVERY, () -> decidedByRedis("closed", "carol"), "limiting resumes after a hang");
	}

	@Test
	void redisTooSlowToAnswer() {
		assertThat(decidedByRedis("open", "alice")).isTrue();
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + this.redis.port());
		try (StatefulRedisConnection<String, String> admin = client.connect()) {
			// every client's commands wait 3 s: far slower than the decision timeout
			admin.sync().clientPause(3_000);
			assertEveryFailModeAppliesWithinTheBound("bob");
			awaitWithin(RECOVERY, () -> decidedByRedis("closed", "carol"), "limiting resumes once Redis is fast");
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void whileRedisIsUpTheFailModesChangeNothing() {
		for (String route : List.of("open", "closed", "local")) {
			int allowed = 0;
			for (int i = 0; i < 15; i++) {
				Response response = decide(route, "dave");
				assertThat(response.getHeaders()).containsEntry("X-RateLimit-Limit", "10");
				allowed += response.isAllowed() ? 1 : 0;
			}
			assertThat(allowed).as(route).isEqualTo(10);
		}
		assertThat(this.guard.failures()).isZero();
	}

}
