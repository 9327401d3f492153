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
import io.windowlimiter.core.policy.SlotRelease;
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
 * Settles sent to a frozen (SIGSTOP) or killed (SIGKILL) Redis of this test's own, asked on a Netty event loop
 * as a filter asks them, one at a time or merged: each answers within the guard's bound, is kept (counted
 * {@code deferred}) and sent once more when Redis answers again; each reservation is settled exactly once, the
 * command written before the fault was seen and its second send included (the settle script's markers).
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
		// an append-only file synced on every write: what Redis counted survives a SIGKILL, so a client's quota
		// after a crash shows what ran before it
		this.redis = RedisProcess.launch(Files.createTempDirectory("redis-settle-fault"), "--appendonly", "yes",
				"--appendfsync", "always");
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
		return spent("alice");
	}

	private long spent(String client) {
		return 100 - onLoop(this.core.peek("tokens", client)).decisions().get(0).remaining();
	}

	/** Scripts Redis ran (or refused with NOSCRIPT) since the last CONFIG RESETSTAT. */
	private long scriptCalls() {
		return calls("evalsha") + calls("eval");
	}

	/** Calls of the command Redis ran (or refused) since its start or the last CONFIG RESETSTAT. */
	private long calls(String command) {
		long calls = 0;
		for (String line : this.admin.sync().info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_" + command + ":")) {
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

	private double deferred(String result) {
		Counter counter = this.meters.find("gateway.ratelimit.settles.deferred").tag("result", result).counter();
		return (counter != null) ? counter.count() : 0;
	}

	/** Alice's tokens spent; -1 while the guard finds Redis back (the read that sets its trial off fails at once). */
	private long spentOrUnknown() {
		return onLoop(this.core.peek("tokens", "alice").map(standing -> 100 - standing.decisions().get(0).remaining())
			.onErrorResume(error -> Mono.just(-1L)));
	}

	private double settles(String result) {
		Counter counter = this.meters.find("gateway.ratelimit.settles").tag("result", result).counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void settlesToAFrozenRedisAreBoundedAndAppliedOnceWhenItAnswersAgain() {
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
			assertThat(onLoop(this.core.settle(reservation, 0))).isEqualTo(Settled.DEFERRED);
			slowest = Math.max(slowest, System.nanoTime() - start);
		}
		assertThat(Duration.ofNanos(slowest)).as("slowest settle while Redis is frozen").isLessThan(BOUND);
		long start = System.nanoTime();
		assertThat(onLoop(this.core.settle(reservations.get(0), 0))).as("settled before: nothing sent")
			.isEqualTo(Settled.DUPLICATE);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(STALL);
		this.redis.thaw();

		long thawed = System.nanoTime();

		// with no call of the client's: the guard's trial finds Redis back, the kept settles go, once each (the
		// one written before the guard saw the freeze ran on thawing, its second send finds its marker)
		long spentAfter;
		int reads = 0;
		while ((spentAfter = spentOrUnknown()) != 10) {
			reads++;
			assertThat(System.nanoTime() - thawed).as("settled within 2 s of the thaw, spent " + spentAfter)
				.isLessThan(Duration.ofSeconds(2).toNanos());
			sleep(20);
		}
		long settledAfter = (System.nanoTime() - thawed) / 1_000_000;
		sleep(1_500);
		assertThat(spent()).as("no kept settle is sent twice").isEqualTo(10);
		long settleScripts = calls("evalsha") - reads - 2;
		System.out.println("Settles to a frozen Redis: slowest " + Duration.ofNanos(slowest).toMillis()
				+ " ms; spent 10 of 50 " + settledAfter + " ms after the thaw; EVALSHA Redis ran since the freeze "
				+ settleScripts + " besides the reads");
		assertThat(settleScripts).as("the written settle and the 8 kept ones' second sends").isLessThanOrEqualTo(1 + 8);
		assertThat(settles("deferred")).isEqualTo(8);
		assertThat(settles("duplicate")).isEqualTo(1);
		assertThat(deferred("applied") + deferred("duplicate")).as("each kept settle sent once").isEqualTo(8);
		assertThat(deferred("dropped")).isZero();

		// a reservation not settled during the outage settles as ever once Redis is back
		assertThat(onLoop(this.core.settle(reservations.get(9), 0))).isEqualTo(Settled.APPLIED);
		assertThat(spent()).isEqualTo(5);
		assertThat(onLoop(this.core.settle(reservations.get(1), 0))).as("a kept settle is not asked again")
			.isEqualTo(Settled.DUPLICATE);
	}

	/**
	 * Settles a busy gateway asks in one event-loop task run as one merged script call. To a frozen Redis: each
	 * is answered within the guard's bound and kept; once thawed Redis runs the merged command written before
	 * the freeze at most once, and the kept second sends settle what it did not, so every client in it stands
	 * refunded, once. To a killed Redis: the merged command, given up before Redis is back, is never written; the
	 * kept settles go once it is back and answers.
	 */
	@Test
	void mergedSettlesToAFrozenThenKilledRedisAreBoundedAndRunAtMostOnce() {
		List<String> clients = new ArrayList<>();
		List<Reservation> reservations = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			clients.add("client-" + i);
			reservations.add(onLoop(this.core.admit("tokens", clients.get(i), 5, Mono.empty())).reservation());
		}
		this.admin.sync().configResetstat();

		this.redis.freeze();
		long slowest = settledInOneTask(reservations.subList(0, 6));
		assertThat(Duration.ofNanos(slowest)).as("slowest merged settle, Redis frozen").isLessThan(BOUND);
		this.redis.thaw();
		// read before any decision: the scripts the thawed Redis ran are the settles' alone
		sleep(1_000);
		long frozenRuns = calls("evalsha");
		assertThat(frozenRuns).as("the merged command written before the freeze and the 6 second sends")
			.isLessThanOrEqualTo(1 + 6);
		awaitAnswers(clients.get(0));
		for (String client : clients.subList(0, 6)) {
			assertThat(spent(client)).as("%s, whose settle was in flight", client).isZero();
		}
		assertThat(onLoop(this.core.settle(reservations.get(0), 0))).as("a kept settle is not asked again")
			.isEqualTo(Settled.DUPLICATE);

		this.redis.kill();
		slowest = settledInOneTask(reservations.subList(6, 12));
		assertThat(Duration.ofNanos(slowest)).as("slowest merged settle, Redis dead").isLessThan(BOUND);
		this.redis.start();
		this.admin.sync().ping();
		awaitAnswers(clients.get(6));
		long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		while (deferred("applied") + deferred("duplicate") + deferred("dropped") < 12 && System.nanoTime() < deadline) {
			sleep(20);
		}
		for (String client : clients.subList(6, 12)) {
			assertThat(spent(client)).as("%s, whose settle was in flight", client).isZero();
		}
		System.out.println("Merged settles: frozen, " + frozenRuns + " settle commands run after the thaw; killed, "
				+ calls("evalsha") + " EVALSHA after the restart; slowest answer " + Duration.ofNanos(slowest).toMillis() + " ms");
		assertThat(settles("deferred")).isEqualTo(12);
		assertThat(deferred("dropped")).isZero();
	}

	/** Settles each reservation to 0 in one task of the event loop; returns the slowest answer's nanoseconds. */
	private long settledInOneTask(List<Reservation> reservations) {
		List<Mono<Long>> answers = new ArrayList<>();
		Mono<Void> asked = Mono.fromRunnable(() -> {
			for (Reservation reservation : reservations) {
				long start = System.nanoTime();
				Mono<Long> answer = this.core.settle(reservation, 0).map(settled -> {
					assertThat(settled).isEqualTo(Settled.DEFERRED);
					return System.nanoTime() - start;
				}).cache();
				answer.subscribe(took -> { }, error -> { });
				answers.add(answer);
			}
		});
		onLoop(asked.then(Mono.just(true)));
		long slowest = 0;
		for (Mono<Long> answer : answers) {
			slowest = Math.max(slowest, answer.block(Duration.ofSeconds(30)));
		}
		return slowest;
	}

	/** Waits (at most 10 s) until the guard lets decisions through again. */
	private void awaitAnswers(String client) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (onLoop(this.core.peek("tokens", client).map(standing -> true).onErrorResume(error -> Mono.empty())) == null) {
			assertThat(System.nanoTime()).as("Redis answers again within 10 s").isLessThan(deadline);
			sleep(50);
		}
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
