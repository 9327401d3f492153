package io.windowlimiter.core.failure;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

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
import io.windowlimiter.core.Slots;
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
 * Issue 44 item 4 (review M1): a concurrency limit of 2 in a 10-minute window, Redis frozen (SIGSTOP) for 2 s
 * while two calls of a client are admitted. The guard gives both decisions up and the fail-mode answers them,
 * holding no Redis slot; their scripts, written to the frozen Redis, run when it thaws and take the two slots.
 * Nothing released them before: the client was refused with {@code Retry-After: 1} for 10 minutes. Now the guard
 * sends their releases once Redis answers again, and the client has its 2 slots back within a bound, with no
 * request of its own needed; Redis runs no more than the two decisions, their two releases and the trials' probes.
 */
class GivenUpSlotsTests {

	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(400);

	private static final Duration BOUND = TIMEOUT.plus(STALL.dividedBy(4));

	private static final Duration FREEZE = Duration.ofSeconds(2);

	/** From the thaw until the client's slots are free again. */
	private static final Duration SLOTS_BACK_WITHIN = Duration.ofSeconds(2);

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
		for (String failMode : List.of("open", "local")) {
			Map<String, Object> args = new LinkedHashMap<>();
			args.put("window-rate-limiter.algorithm", "concurrency");
			args.put("window-rate-limiter.limit", "2");
			args.put("window-rate-limiter.window", "10m");
			args.put("window-rate-limiter.fail-mode", failMode);
			args.put("window-rate-limiter.instances", "1");
			this.core.configure(failMode, args, SlotRelease.IF_COUNTED);
		}
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
	void failModeOpenHoldsNoSlotOnceRedisThaws() throws Exception {
		frozenWhileTwoCallsAreAdmitted("open", "open-client");
	}

	/** Fail-mode local holds the two slots in memory; the ones Redis took too are released as well. */
	@Test
	void failModeLocalHoldsItsSlotsOnlyInMemory() throws Exception {
		frozenWhileTwoCallsAreAdmitted("local", "local-client");
	}

	private void frozenWhileTwoCallsAreAdmitted(String route, String client) throws Exception {
		String slotsKey = this.core.keysOf(route, client).get(0);
		RedisCommands<String, String> admin = this.admin.sync();
		long scriptsBefore = scriptCalls(admin);
		Runnable freeze = this.redis.freezeWhenRun();
		freeze.run();
		long frozenAt = System.nanoTime();
		List<CompletableFuture<Timed>> calls = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			calls.add(admit(route, client));
		}
		List<Admission> duringFreeze = new ArrayList<>();
		for (CompletableFuture<Timed> call : calls) {
			Timed timed = call.get();
			assertThat(timed.took()).as("an answer while Redis is frozen").isLessThan(BOUND);
			duringFreeze.add(timed.admission());
		}
		assertThat(duringFreeze).as("both calls pass by the fail-mode").allMatch(Admission::passes);
		if (route.equals("open")) {
			assertThat(duringFreeze).as("fail-mode open holds no slot").allMatch(admission -> admission.slots() == null);
		}
		else {
			assertThat(duringFreeze).as("fail-mode local holds its slots in memory").allMatch(admission -> admission.slots() != null);
		}
		sleepUntil(frozenAt + FREEZE.toNanos());
		this.redis.thaw();
		long thawedAt = System.nanoTime();

		// the calls' responses end (the adapter releases what the admission holds: the local slots)
		for (Admission admission : duringFreeze) {
			Slots slots = admission.slots();
			if (slots != null) {
				slots.release().block(Duration.ofSeconds(5));
			}
		}
		// with no request of the client's: the slots its given-up decisions took on thawing come back
		long held;
		do {
			held = admin.zcard(slotsKey);
			if (held > 0) {
				assertThat(System.nanoTime() - thawedAt).as("slots still held in Redis after the thaw, ns: " + held)
					.isLessThan(SLOTS_BACK_WITHIN.toNanos());
				Thread.sleep(20);
			}
		}
		while (held > 0);
		long slotsBackAfter = (System.nanoTime() - thawedAt) / 1_000_000;

		// the client uses its two slots again, decided by Redis
		List<Admission> after = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			Timed timed = admit(route, client).get();
			assertThat(timed.took()).as("an answer after the thaw").isLessThan(BOUND);
			after.add(timed.admission());
		}
		assertThat(after.subList(0, 2)).as("two calls take the client's two slots in Redis")
			.allMatch(admission -> admission.passes() && admission.slots() != null
					&& "2".equals(admission.headers().get("X-RateLimit-Limit")));
		assertThat(after.get(2).passes()).as("a third is refused: the limit holds").isFalse();
		assertThat(admin.zcard(slotsKey)).isEqualTo(2);
		for (Admission admission : after.subList(0, 2)) {
			admission.slots().release().block(Duration.ofSeconds(5));
		}

		long scripts = scriptCalls(admin) - scriptsBefore;
		double released = count("released");
		double gone = count("gone");
		double dropped = count("dropped");
		System.out.println("[given-up slots] fail-mode " + route + ": slots free " + slotsBackAfter + " ms after the thaw; "
				+ "given-up releases: released " + released + ", gone " + gone + ", dropped " + dropped
				+ "; scripts Redis ran from the freeze on " + scripts + " (trials " + this.guard.trials() + ")");
		assertThat(released).as("given-up decisions' slots released").isEqualTo(2);
		assertThat(dropped).as("given-up decisions' releases dropped").isZero();
		// from the freeze: 2 decisions, their 2 releases, the trials' probes, then 3 decisions and 2 releases
		assertThat(scripts).as("scripts Redis ran from the freeze on").isLessThanOrEqualTo(2 + 2 + this.guard.trials() + 3 + 2);
	}

	private CompletableFuture<Timed> admit(String route, String client) {
		long start = System.nanoTime();
		return Mono.defer(() -> this.core.admit(route, client, Mono.empty()))
			.subscribeOn(this.onLoop)
			.map(admission -> new Timed(admission, Duration.ofNanos(System.nanoTime() - start)))
			.toFuture();
	}

	private double count(String result) {
		Counter counter = this.meters.find("gateway.ratelimit.releases.given_up").tag("result", result).counter();
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

	private record Timed(Admission admission, Duration took) {
	}

}
