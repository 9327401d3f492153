package io.windowlimiter.core.failure;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoop;
import io.windowlimiter.core.Admission;
import io.windowlimiter.core.DecisionWarmUp;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.Reservation;
import io.windowlimiter.core.algorithm.LimitScript;
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
 * Attack report r2, finding 7: two calls of a client hold its two concurrency slots (limit 2, window 10m) in
 * Redis, and a third holds a token reservation of 1,296; Redis freezes (SIGSTOP) and the calls end while it is
 * frozen. Their releases and the settle failed (one timed out with its command written, the others at once,
 * the guard stalled) and were dropped: the slots stayed held until their key expired (10 minutes of
 * {@code Retry-After: 1}), and the client stayed charged 1,296 tokens instead of the 1,120 it used. Now the guard
 * keeps them and sends each once Redis answers again: with no request of the client's, its slots are free and
 * its tokens settled within a bound of the thaw, and Redis runs no more than the decisions' scripts, the one
 * written release, one resend of each kept call and the trials' probes.
 */
class StalledReleasesTests {

	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(400);

	private static final Duration BOUND = TIMEOUT.plus(STALL.dividedBy(4));

	private static final Duration FREEZE = Duration.ofSeconds(2);

	/** From the thaw until the client's slots are free and its tokens settled. */
	private static final Duration BACK_WITHIN = Duration.ofSeconds(2);

	private static final long RESERVED = 1_296;

	private static final long USED = 1_120;

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final DefaultEventLoop loop = new DefaultEventLoop();

	private final Scheduler onLoop = Schedulers.fromExecutor(this.loop);

	private RedisProcess redis;

	private RedisClient adminClient;

	private StatefulRedisConnection<String, String> admin;

	private LettuceConnectionFactory connectionFactory;

	private RedisGuard guard;

	private RateLimiterCore core;

	@BeforeEach
	void start() {
		this.redis = RedisProcess.launch();
		this.adminClient = RedisClient.create("redis://127.0.0.1:" + this.redis.port());
		this.admin = this.adminClient.connect();
		this.connectionFactory = new LettuceConnectionFactory("127.0.0.1", this.redis.port());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.guard = new RedisGuard(TIMEOUT, STALL, Duration.ofSeconds(10));
		LimitScript script = new LimitScript(new ReactiveStringRedisTemplate(this.connectionFactory));
		this.core = RateLimiterCore.of(script, this.guard, new DenyCache(1_000, System::nanoTime),
				new LocalWindowLimiter(1_000), new RateLimitHeaders(RateLimitHeaders.Names.defaults()),
				new RateLimitMetrics(this.meters), Clock.systemUTC());
		new DecisionWarmUp(script, Duration.ofSeconds(10)).start();
		this.core.configure("slots", Map.of("window-rate-limiter.algorithm", "concurrency", "window-rate-limiter.limit", "2",
				"window-rate-limiter.window", "10m", "window-rate-limiter.fail-mode", "open",
				"window-rate-limiter.instances", "1"), SlotRelease.IF_COUNTED);
		Map<String, Object> tokens = new LinkedHashMap<>();
		tokens.put("window-rate-limiter.algorithm", "fixed-window");
		tokens.put("window-rate-limiter.limit", "10000");
		tokens.put("window-rate-limiter.window", "10m");
		tokens.put("window-rate-limiter.fail-mode", "open");
		this.core.configure("tokens", tokens);
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

	@Test
	void releasesAndSettleThatRedisCouldNotTakeAreSentOnceItAnswers() throws Exception {
		String client = "frozen-client";
		String slotsKey = this.core.keysOf("slots", client).get(0);
		RedisCommands<String, String> admin = this.admin.sync();
		Admission first = timed(() -> this.core.admit("slots", client, Mono.empty()));
		Admission second = timed(() -> this.core.admit("slots", client, Mono.empty()));
		Admission llm = timed(() -> this.core.admit("tokens", client, RESERVED, Mono.empty()));
		assertThat(List.of(first, second, llm)).as("admitted by Redis").allMatch(Admission::passes);
		assertThat(admin.zcard(slotsKey)).as("slots held in Redis").isEqualTo(2);
		Reservation reservation = llm.reservation();
		assertThat(reservation).isNotNull();
		assertThat(used(client)).isEqualTo(RESERVED);
		long scriptsBefore = scriptCalls(admin);
		this.reads = 0;

		this.redis.freeze();
		long frozenAt = System.nanoTime();
		// the first call ends at once: its release is written to the frozen Redis and given up at the stall
		timed(() -> first.slots().release().then(Mono.just(true)));
		assertThat(this.guard.isStalled()).as("stalled once a call waited the stall timeout").isTrue();
		// the others end while the guard is stalled: they fail at once, nothing is written
		timed(() -> second.slots().release().then(Mono.just(true)));
		Settled settled = timed(() -> this.core.settle(reservation, USED));
		assertThat(settled).as("the settle while Redis is frozen").isNotEqualTo(Settled.APPLIED);
		sleepUntil(frozenAt + FREEZE.toNanos());
		this.redis.thaw();
		long thawedAt = System.nanoTime();

		// with no request of the client's: its slots come back and its tokens are settled
		long held;
		long charged;
		do {
			held = admin.zcard(slotsKey);
			charged = used(client);
			if (held > 0 || charged != USED) {
				assertThat(System.nanoTime() - thawedAt)
					.as("after the thaw: slots still held in Redis " + held + ", tokens charged " + charged)
					.isLessThan(BACK_WITHIN.toNanos());
				Thread.sleep(20);
			}
		}
		while (held > 0 || charged != USED);
		long backAfter = (System.nanoTime() - thawedAt) / 1_000_000;
		// the reads above ran one decision script each at cost 0
		long reads = scriptCalls(admin) - scriptsBefore;

		Admission again1 = timed(() -> this.core.admit("slots", client, Mono.empty()));
		Admission again2 = timed(() -> this.core.admit("slots", client, Mono.empty()));
		Admission third = timed(() -> this.core.admit("slots", client, Mono.empty()));
		assertThat(List.of(again1, again2)).as("the client's two slots, taken in Redis")
			.allMatch(admission -> admission.passes() && admission.slots() != null);
		assertThat(third.passes()).as("a third is refused: the limit holds").isFalse();

		double kept = count("gateway.ratelimit.releases", "deferred");
		double dropped = count("gateway.ratelimit.releases", "dropped");
		double resentReleased = count("gateway.ratelimit.releases.deferred", "released");
		double resentGone = count("gateway.ratelimit.releases.deferred", "gone");
		double settleKept = count("gateway.ratelimit.settles", "deferred");
		double settleApplied = count("gateway.ratelimit.settles.deferred", "applied");
		System.out.println("[stalled releases] back " + backAfter + " ms after the thaw; releases deferred " + kept
				+ ", dropped " + dropped + ", resent: released " + resentReleased + " gone " + resentGone
				+ "; settles deferred " + settleKept + ", resent applied " + settleApplied + "; scripts from the freeze "
				+ "until back, with the reads " + reads + " (trials " + this.guard.trials() + ")");
		assertThat(dropped).as("releases dropped").isZero();
		assertThat(kept).as("releases kept while Redis could not take them").isEqualTo(2);
		// the written one ran on thawing (released), its resend found nothing; the other's resend released
		assertThat(resentReleased + resentGone).as("each kept release sent once").isEqualTo(2);
		assertThat(settleKept).as("settles kept").isEqualTo(1);
		assertThat(settleApplied).as("the kept settle applied once").isEqualTo(1);
		// the one written release, 2 resent releases, 1 resent settle, the trials' probes and the polling reads
		assertThat(reads).as("scripts Redis ran from the freeze until back")
			.isLessThanOrEqualTo(1 + 2 + 1 + this.guard.trials() + this.reads);
	}

	/** The client's standings read since the freeze (each a script at cost 0, or nothing while stalled). */
	private long reads;

	private <T> T timed(Supplier<Mono<T>> call) throws Exception {
		long start = System.nanoTime();
		CompletableFuture<T> future = Mono.defer(call).subscribeOn(this.onLoop).toFuture();
		T value = future.get();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("an answer").isLessThan(BOUND);
		return value;
	}

	/** Tokens the client is charged in the token limit, read in Redis at cost 0; -1 when Redis did not answer. */
	private long used(String client) throws Exception {
		this.reads++;
		return timed(() -> this.core.peek("tokens", client)
			.map(standing -> 10_000 - standing.decisions().get(0).remaining())
			.onErrorResume(error -> Mono.just(-1L)));
	}

	private double count(String name, String result) {
		Counter counter = this.meters.find(name).tag("result", result).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static long scriptCalls(RedisCommands<String, String> admin) {
		long calls = 0;
		for (String line : admin.info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:")) {
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

	private static void sleepUntil(long nanoTime) throws InterruptedException {
		long left = nanoTime - System.nanoTime();
		if (left > 0) {
			Thread.sleep(left / 1_000_000);
		}
	}

}
