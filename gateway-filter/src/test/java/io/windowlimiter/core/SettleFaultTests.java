package io.windowlimiter.core;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoop;
import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Settles sent to a frozen Redis (SIGSTOP) of this test's own, asked on a Netty event loop as a filter asks
 * them: each answers within the guard's bound, is dropped and counted, and is never sent again; what Redis
 * runs once thawed is at most the settle written before the freeze was seen, once.
 */
class SettleFaultTests {

	/** The defaults users get (window-rate-limiter.redis-timeout and redis-stall-timeout). */
	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(400);

	/** The timeout and one watchdog tick. */
	private static final Duration BOUND = TIMEOUT.plus(STALL.dividedBy(4));

	private RedisProcess redis;

	private RedisClient adminClient;

	private StatefulRedisConnection<String, String> admin;

	private LettuceConnectionFactory connectionFactory;

	private RedisGuard guard;

	private RateLimiterCore core;

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final DefaultEventLoop loop = new DefaultEventLoop();

	private final Scheduler onLoop = Schedulers.fromExecutor(this.loop);

	@BeforeEach
	void start() throws IOException {
		this.redis = RedisProcess.launch(Files.createTempDirectory("redis-settle-fault"));
		this.adminClient = RedisClient.create("redis://127.0.0.1:" + this.redis.port());
		this.admin = this.adminClient.connect();
		this.connectionFactory = new LettuceConnectionFactory("127.0.0.1", this.redis.port());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		LimitScript script = new LimitScript(new ReactiveStringRedisTemplate(this.connectionFactory));
		script.load().block(Duration.ofSeconds(10));
		this.guard = new RedisGuard(TIMEOUT, STALL, Duration.ofSeconds(10));
		this.core = RateLimiterCore.of(script, this.guard, new DenyCache(1_000, System::nanoTime),
				new LocalWindowLimiter(1_000), new RateLimitHeaders(RateLimitHeaders.Names.defaults()),
				new RateLimitMetrics(this.meters), Clock.systemUTC());
		this.core.configure("tokens", Map.of("window-rate-limiter.algorithm", "fixed-window",
				"window-rate-limiter.limit", "100", "window-rate-limiter.window", "366d"));
	}

	@AfterEach
	void stop() {
		this.redis.thaw();
		this.guard.close();
		this.connectionFactory.destroy();
		this.adminClient.shutdown();
		this.redis.close();
		this.loop.shutdownGracefully();
	}

	private <T> T onLoop(Mono<T> call) {
		return Mono.defer(() -> call).subscribeOn(this.onLoop).block(Duration.ofSeconds(30));
	}

	private long spent() {
		return 100 - onLoop(this.core.peek("tokens", "alice")).decisions().get(0).remaining();
	}

	/** Scripts Redis ran (or refused with NOSCRIPT) since the last CONFIG RESETSTAT. */
	private long scriptCalls() {
		long calls = 0;
		for (String line : this.admin.sync().info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
				for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
					String[] pair = field.split("=");
					if (pair[0].equals("calls") || pair[0].equals("rejected_calls")) {
						calls += Long.parseLong(pair[1]);
					}
				}
			}
		}
		return calls;
	}

	private double settles(String result) {
		Counter counter = this.meters.find("gateway.ratelimit.settles").tag("result", result).counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void settlesToAFrozenRedisAreBoundedDroppedAndNeverSentAgain() {
		List<Reservation> reservations = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			reservations.add(onLoop(this.core.admit("tokens", "alice", 5, Mono.empty())).reservation());
		}
		assertThat(spent()).isEqualTo(50);
		this.admin.sync().configResetstat();

		this.redis.freeze();
		long slowest = 0;
		for (Reservation reservation : reservations.subList(0, 8)) {
			long start = System.nanoTime();
			assertThat(onLoop(this.core.settle(reservation, 0))).isEqualTo(Settled.DROPPED);
			slowest = Math.max(slowest, System.nanoTime() - start);
		}
		assertThat(Duration.ofNanos(slowest)).as("slowest settle while Redis is frozen").isLessThan(BOUND);
		long start = System.nanoTime();
		assertThat(onLoop(this.core.settle(reservations.get(0), 0))).as("settled before: nothing sent")
			.isEqualTo(Settled.DUPLICATE);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(STALL);
		this.redis.thaw();

		// limiting resumes: the guard's trials end the stall
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		Long spentAfter = null;
		while (spentAfter == null) {
			assertThat(System.nanoTime()).as("Redis answers again within 10 s").isLessThan(deadline);
			spentAfter = onLoop(this.core.peek("tokens", "alice").map(standing -> 100
					- standing.decisions().get(0).remaining()).onErrorResume(error -> Mono.empty()));
		}
		// what the frozen Redis ran on thawing: the settle written before the guard saw the freeze, once; the
		// others failed at once and sent nothing
		assertThat(spentAfter).isIn(45L, 50L);
		sleep(1_500);
		assertThat(spent()).as("no dropped settle is sent later").isEqualTo(spentAfter);
		long settleScripts = scriptCalls();
		System.out.println("Settles to a frozen Redis: slowest " + Duration.ofNanos(slowest).toMillis()
				+ " ms; spent after the thaw " + spentAfter + " of 50; scripts Redis ran since the freeze "
				+ settleScripts);
		assertThat(settles("dropped")).isEqualTo(8);
		assertThat(settles("duplicate")).isEqualTo(1);

		// a reservation not settled during the outage settles as ever once Redis is back
		assertThat(onLoop(this.core.settle(reservations.get(9), 0))).isEqualTo(Settled.APPLIED);
		assertThat(spent()).isEqualTo(spentAfter - 5);
		assertThat(onLoop(this.core.settle(reservations.get(1), 0))).as("a dropped settle is not tried again")
			.isEqualTo(Settled.DUPLICATE);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
