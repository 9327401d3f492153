package io.windowlimiter.core.failure;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.netty.channel.DefaultEventLoop;
import io.windowlimiter.core.Admission;
import io.windowlimiter.core.DecisionWarmUp;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis killed, hung (SIGSTOP), paused (CLIENT PAUSE) and blocked (DEBUG SLEEP), with a real redis-server
 * process of this test's own, decisions asked on a Netty event loop as the gateway asks them. Whatever Redis
 * does, every answer comes within the bound, each route does what its fail-mode says, the requests the
 * fail-mode answered are not charged to the client that sent them when Redis comes back (Redis runs at most
 * the decisions that waited on it: those in flight and the trials), and limiting from Redis resumes.
 */
class RedisFaultTests {

	/** The defaults users get (window-rate-limiter.redis-timeout and redis-stall-timeout). */
	private static final Duration TIMEOUT = Duration.ofMillis(600);

	private static final Duration STALL = Duration.ofMillis(400);

	/** What the defaults promise: the timeout and one watchdog tick; Lettuce's own command timeout is 60 s. */
	private static final Duration BOUND = TIMEOUT.plus(STALL.dividedBy(4));

	private static final Duration RECOVERY = Duration.ofSeconds(10);

	/** Clients of the load under a freeze: more than the guard's cap of decisions in flight. */
	private static final int LOAD_CLIENTS = 5_000;

	/** Each load client's pause between an answer and its next request: 10,000 asked a second in all. */
	private static final int LOAD_PAUSE_MS = 500;

	private RedisProcess redis;

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private RedisClient adminClient;

	private StatefulRedisConnection<String, String> adminConnection;

	/** The Netty event loop decisions are asked on, as a gateway's request is. */
	private final DefaultEventLoop loop = new DefaultEventLoop();

	private final Scheduler onLoop = Schedulers.fromExecutor(this.loop);

	private LettuceConnectionFactory connectionFactory;

	private RedisGuard guard;

	private LimitScript script;

	private WindowRateLimiter limiter;

	private static final List<String> ROUTES = List.of("open", "closed", "local");

	private long maxLatencyNanos;

	private int quickAnswers;

	@BeforeEach
	void start() {
		this.redis = RedisProcess.launchWith("--enable-debug-command", "local");
		this.adminClient = RedisClient.create("redis://127.0.0.1:" + this.redis.port());
		this.adminConnection = this.adminClient.connect();
		this.connectionFactory = new LettuceConnectionFactory("127.0.0.1", this.redis.port());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(this.connectionFactory);
		this.guard = new RedisGuard(TIMEOUT, STALL, Duration.ofSeconds(10));
		LimitScript script = new LimitScript(template);
		this.script = script;
		this.limiter = new WindowRateLimiter(RateLimiterCore.of(script, this.guard, new DenyCache(1_000, System::nanoTime),
				new LocalWindowLimiter(1_000), new RateLimitHeaders(RateLimitHeaders.Names.defaults()),
				new RateLimitMetrics(this.meters), Clock.systemUTC()), null, false);
		// as the application does before it serves: connect, load the script, warm the path
		new DecisionWarmUp(script, Duration.ofSeconds(10)).start();
		route("open", "open", "1");
		route("closed", "closed", "1");
		route("local", "local", "2");
	}

	private void route(String id, String failMode, String instances) {
		route(this.limiter, id, "window-rate-limiter.algorithm=sliding-window-counter", "window-rate-limiter.limit=10",
				"window-rate-limiter.window=366d", "window-rate-limiter.fail-mode=" + failMode,
				"window-rate-limiter.instances=" + instances);
	}

	private static void route(WindowRateLimiter limiter, String id, String... args) {
		Map<String, Object> map = new java.util.LinkedHashMap<>();
		for (String arg : args) {
			String[] pair = arg.split("=", 2);
			map.put(pair[0], pair[1]);
		}
		limiter.onApplicationEvent(new FilterArgsEvent(limiter, id, map));
	}

	@AfterEach
	void stop() {
		this.guard.close();
		this.connectionFactory.destroy();
		this.adminClient.shutdown();
		this.redis.close();
		this.loop.shutdownGracefully();
	}

	private Response decide(String route, String client) {
		long start = System.nanoTime();
		Response response = onLoop(this.limiter.isAllowed(route, client)).block(Duration.ofSeconds(30));
		long latency = System.nanoTime() - start;
		this.maxLatencyNanos = Math.max(this.maxLatencyNanos, latency);
		this.quickAnswers += (latency < STALL.toNanos() / 4) ? 1 : 0;
		return response;
	}

	/** Asked on the event loop: the guard's timers, the batch and the hop back run as in the gateway. */
	private <T> Mono<T> onLoop(Mono<T> call) {
		return Mono.defer(() -> call).subscribeOn(this.onLoop);
	}

	private RedisCommands<String, String> admin() {
		return this.adminConnection.sync();
	}

	/** How many scripts Redis ran (or refused with NOSCRIPT) since start or the last CONFIG RESETSTAT. */
	private long scriptCalls() {
		return calls("eval") + calls("evalsha");
	}

	private long calls(String command) {
		for (String line : admin().info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_" + command + ":")) {
				long calls = 0;
				for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
					String[] pair = field.split("=");
					if (pair[0].equals("calls") || pair[0].equals("rejected_calls")) {
						calls += Long.parseLong(pair[1]);
					}
				}
				return calls;
			}
		}
		return 0;
	}

	/** What the client has spent of each route's 10, read at cost 0; null while Redis cannot answer. */
	private Long spent(String client) {
		long spent = 0;
		for (String route : ROUTES) {
			RateLimiterCore.Standing standing = onLoop(this.limiter.core().peek(route, client)).onErrorResume(e -> Mono.empty())
				.block(Duration.ofSeconds(5));
			if (standing == null) {
				return null;
			}
			spent += 10 - standing.decisions().get(0).remaining();
		}
		return spent;
	}

	/** A response decided by Redis carries this route's full limit (10); the fail-modes answer otherwise. */
	private boolean decidedByRedis(String route, String client) {
		return "10".equals(decide(route, client).getHeaders().get("X-RateLimit-Limit"));
	}

	/** @return how many of the 90 decisions waited on Redis, the most that can have sent a command */
	private int assertEveryFailModeAppliesWithinTheBound(String client) {
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
		return 90 - this.quickAnswers;
	}

	private static void awaitWithin(Duration limit, BooleanSupplier condition, String what) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as(what + " within " + limit).isLessThan(deadline);
			sleep(10);
		}
	}

	/** Bob spends 4 of each route's 10 while Redis is up. */
	private void bobSpendsFour() {
		for (String route : ROUTES) {
			for (int i = 0; i < 4; i++) {
				assertThat(decidedByRedis(route, "bob")).isTrue();
			}
		}
		assertThat(spent("bob")).isEqualTo(12);
	}

	@Test
	void redisKilledAndRestartedOnTheSamePort() {
		bobSpendsFour();
		this.redis.kill();
		int waited = assertEveryFailModeAppliesWithinTheBound("bob");
		this.redis.start();
		// restarted empty: whatever bob's count holds now was replayed from what the gateway queued
		int[] peeks = { 0 };
		awaitWithin(RECOVERY, () -> {
			peeks[0]++;
			return spent("bob") != null && !this.guard.isStalled();
		}, "limiting resumes after a restart");
		long replayed = spent("bob");
		assertThat(replayed).as("bob's requests answered by fail-mode, then run by the restarted Redis (%d waited)",
				waited).isLessThanOrEqualTo(waited);
		assertThat(waited).as("decisions that waited on the dead Redis: in flight and trials").isLessThanOrEqualTo(15);
		// each peek reads three routes, and may meet NOSCRIPT once per route
		assertThat(scriptCalls()).as("scripts the restarted Redis ran").isLessThanOrEqualTo(waited + 6L * peeks[0] + 3);
	}

	/**
	 * The script's topology tells the guard when Redis dies, and by then reads the connection as down: the guard
	 * checks what waits on it at that moment. (Lettuce's DisconnectedEvent comes while the connection still reads
	 * as open; its deactivation after.)
	 */
	@Test
	void whenRedisDiesTheTopologyTellsAndReadsTheConnectionAsDown() throws Exception {
		RedisGuard.Topology topology = this.script.topology();
		CompletableFuture<Boolean> downWhenTold = new CompletableFuture<>();
		topology.whenDisconnected(() -> downWhenTold.complete(topology.isDisconnected(RedisGuard.ONE_NODE)));
		long killed = System.nanoTime();
		this.redis.kill();
		assertThat(downWhenTold.get(2, java.util.concurrent.TimeUnit.SECONDS))
			.as("the connection reads as down when the guard is told").isTrue();
		assertThat((System.nanoTime() - killed) / 1_000_000).as("ms from the kill to the guard being told")
			.isLessThan(STALL.toMillis() / 4);
	}

	/**
	 * A decision waiting on a connection that goes down fails when the guard is told, not at the watchdog's next
	 * tick: with a stall timeout of 8 s the tick comes every 2 s. Such waits are the commands Lettuce keeps to send
	 * again after reconnecting, whose write failed on the dying connection (on a fresh Server MVC instance whose
	 * Redis died under its first burst, the settles then answered 100 to 300 ms after the other requests).
	 */
	@Test
	void aDecisionWaitingOnAConnectionThatGoesDownFailsWhenTheGuardIsTold() {
		AtomicBoolean down = new AtomicBoolean();
		List<Runnable> told = new java.util.concurrent.CopyOnWriteArrayList<>();
		RedisGuard.Topology topology = new RedisGuard.Topology() {

			@Override
			public boolean isDisconnected(Object node) {
				return down.get();
			}

			@Override
			public java.util.Set<Object> masters() {
				return null;
			}

			@Override
			public void whenDisconnected(Runnable check) {
				told.add(check);
			}

		};
		try (RedisGuard slowTicks = new RedisGuard(Duration.ofSeconds(10), Duration.ofSeconds(8), Duration.ofSeconds(10))) {
			slowTicks.follow(topology);
			CompletableFuture<Long> failed = new CompletableFuture<>();
			// sent, never answered: what Lettuce holds for a reconnect that does not come
			slowTicks.protect(Mono.never())
				.subscribe(reply -> failed.completeExceptionally(new AssertionError("answered " + reply)),
						error -> failed.complete(System.nanoTime()));
			sleep(100);
			long wentDown = System.nanoTime();
			down.set(true);
			told.forEach(Runnable::run);
			long failedAfterMillis = (failed.orTimeout(15, java.util.concurrent.TimeUnit.SECONDS).join() - wentDown)
					/ 1_000_000;
			assertThat(failedAfterMillis).as("ms from the connection going down to the waiting decision's failure")
				.isLessThan(100);
		}
	}

	@Test
	void redisKilledUnderLoadHasNoBacklogToRunWhenRestarted() {
		assertThat(decidedByRedis("open", "alice")).isTrue();
		this.redis.kill();
		long[] slowest = { 0 };
		// 64 clients at once, each asking again as soon as it is answered, for 3 s
		Long answered = Flux.range(0, 64)
			.flatMap(client -> Flux.range(0, Integer.MAX_VALUE)
				.concatMap(i -> {
					long start = System.nanoTime();
					return onLoop(this.limiter.isAllowed("open", "load-" + client))
						.doOnNext(answer -> slowest[0] = Math.max(slowest[0], System.nanoTime() - start));
				}), 64)
			.take(Duration.ofSeconds(3))
			.count()
			.block(Duration.ofSeconds(10));
		this.redis.start();
		// one client asks until Lettuce has reconnected (its back-off grows to seconds): then what the gateway
		// kept queued has been written
		int[] asked = { 0 };
		awaitWithin(RECOVERY, () -> {
			asked[0]++;
			return decidedByRedis("open", "after-restart");
		}, "limiting resumes after a restart");
		sleep(200);
		long ran = scriptCalls();
		System.out.println("Redis killed under 64 clients: " + answered + " answers in 3 s, slowest "
				+ Duration.ofNanos(slowest[0]).toMillis() + " ms; the restarted Redis ran " + ran + " scripts, "
				+ asked[0] + " asks to see it back included");
		assertThat(Duration.ofNanos(slowest[0])).isLessThanOrEqualTo(BOUND);
		assertThat(ran).as("scripts run by the restarted Redis, of %d answered while it was dead", answered)
			// each ask that reached Redis ran at most EVALSHA, NOSCRIPT, EVALSHA; those in flight at the kill may be
			// replayed, as may a trial not given up yet
			.isLessThanOrEqualTo(64 + 10 + 2L * asked[0]);
	}

	@Test
	void redisHangingThenResuming() {
		bobSpendsFour();
		long before = scriptCalls();
		long trialsBefore = this.guard.trials();
		this.redis.freeze();
		int waited;
		try {
			waited = assertEveryFailModeAppliesWithinTheBound("bob");
		}
		finally {
			this.redis.thaw();
		}
		int[] peeks = { 0 };
		awaitWithin(RECOVERY, () -> {
			peeks[0]++;
			return spent("bob") != null;
		}, "limiting resumes after a hang");
		long charged = spent("bob") - 12;
		long trials = this.guard.trials() - trialsBefore;
		System.out.println("Redis frozen: " + waited + " of 90 decisions waited, slowest "
				+ Duration.ofNanos(this.maxLatencyNanos).toMillis() + " ms; bob charged " + charged
				+ " after the thaw; Redis ran " + (scriptCalls() - before) + " scripts after the thaw, " + peeks[0]
				+ " peeks of 3 and " + trials + " trial probes included");
		assertThat(charged).as("bob's requests answered by fail-mode and charged after the thaw (%d waited)", waited)
			.isLessThanOrEqualTo(waited);
		assertThat(waited).as("decisions that waited on the frozen Redis: in flight and trials").isLessThanOrEqualTo(15);
		// the trials' probes (one per stall timeout and timeout at most) charge nobody
		assertThat(trials).as("trial probes sent while frozen").isLessThanOrEqualTo(5);
		assertThat(scriptCalls() - before).as("scripts Redis ran after the thaw")
			.isLessThanOrEqualTo(waited + trials + 3L * (peeks[0] + 1));
		assertThat(decidedByRedis("closed", "bob")).isTrue();
		// fail-fast answers are no round trips: the Redis timer counts only the decisions that waited
		Timer failed = this.meters.find("gateway.ratelimit.redis").tag("result", "failure").timer();
		assertThat(failed).isNotNull();
		assertThat(failed.count()).as("round trips timed as failed, of %d that waited", waited).isBetween(1L, (long) waited);
	}

	/**
	 * Redis frozen 10 s while {@value #LOAD_CLIENTS} clients (more than the cap of decisions in flight) ask
	 * again every {@value #LOAD_PAUSE_MS} ms: the decisions waiting never exceed the cap, the heap after a GC
	 * stays where it was (an unbounded queue of the commands asked during the freeze would hold
	 * ~100,000 commands, some 100 MB), and Redis runs at most the cap and the trials once thawed.
	 * The one-minute version against the packaged jar is gateway-app's RedisOutageSoak.
	 */
	@Test
	void redisFrozenUnderLoadFarAboveTheCapKeepsWhatWaitsBounded() {
		assertThat(decidedByRedis("open", "henry")).isTrue();
		long heapBefore = heapAfterGc();
		AtomicInteger mostInFlight = new AtomicInteger();
		AtomicBoolean sampling = new AtomicBoolean(true);
		Thread sampler = new Thread(() -> {
			while (sampling.get()) {
				mostInFlight.accumulateAndGet(this.guard.inFlight(), Math::max);
				LockSupport.parkNanos(100_000);
			}
		}, "in-flight-sampler");
		sampler.setDaemon(true);
		sampler.start();
		AtomicLong answered = new AtomicLong();
		Flux<Response> load = Flux.range(0, LOAD_CLIENTS)
			.flatMap(client -> Flux.range(0, Integer.MAX_VALUE)
				.concatMap(i -> onLoop(this.limiter.isAllowed("open", "soak-" + client))
					.doOnNext(answer -> answered.incrementAndGet())
					.delayElement(Duration.ofMillis(LOAD_PAUSE_MS))), LOAD_CLIENTS);
		reactor.core.Disposable loading = load.subscribe();
		long before;
		long heapFrozen;
		long answeredFrozen;
		long countToFreezeMillis;
		long decidedBeforeFreeze;
		try {
			sleep(1_000);
			// the signal's process started first: the window between the count and the freeze is then short
			Runnable freeze = this.redis.freezeWhenRun();
			long countRead = System.nanoTime();
			before = scriptCalls();
			long decidedAtCount = redisAnswers();
			long answeredBefore = answered.get();
			freeze.run();
			countToFreezeMillis = Duration.ofNanos(System.nanoTime() - countRead).toMillis() + 1;
			try {
				sleep(10_000);
				answeredFrozen = answered.get() - answeredBefore;
				// Redis answers nothing while frozen: these are the decisions it ran after the count, before the freeze
				decidedBeforeFreeze = redisAnswers() - decidedAtCount;
				heapFrozen = heapAfterGc();
			}
			finally {
				loading.dispose();
				this.redis.thaw();
			}
		}
		finally {
			loading.dispose();
			sampling.set(false);
		}
		awaitWithin(RECOVERY, () -> decidedByRedis("open", "after-thaw"), "limiting resumes after a hang");
		long ran = scriptCalls() - before;
		System.out.println("Redis frozen 10 s under " + LOAD_CLIENTS + " clients: " + answeredFrozen
				+ " answers meanwhile, most decisions in flight " + mostInFlight.get() + " (cap "
				+ RedisGuard.DEFAULT_MAX_IN_FLIGHT + "), shed " + this.guard.shed() + "; heap after GC "
				+ (heapBefore >> 20) + " MB before, " + (heapFrozen >> 20) + " MB frozen; Redis ran " + ran
				+ " scripts after the thaw (" + countToFreezeMillis + " ms from reading the count to the freeze, "
				+ decidedBeforeFreeze + " decisions Redis answered in them)");
		assertThat(answeredFrozen).as("answers while frozen: the load went on").isGreaterThan(20_000);
		assertThat(mostInFlight.get()).as("decisions in flight, most sampled")
			.isLessThanOrEqualTo(RedisGuard.DEFAULT_MAX_IN_FLIGHT);
		assertThat(this.guard.shed()).as("decisions shed: the load reached the cap").isPositive();
		assertThat(heapFrozen - heapBefore).as("heap after GC grown while frozen, bytes")
			.isLessThanOrEqualTo(30L * 1024 * 1024);
		// the cap, a trial per stall timeout (each a probe, EVAL "return {1}", and no decision), the asks to see
		// it back, and the decisions Redis ran between reading the count and the freeze: counted by their answers,
		// not assumed from the load's average rate (its clients ask in bursts: a CI run had Redis run 2,433 scripts
		// after the thaw where the cap, the trials and that rate over a 30 ms window allowed 2,350). The cap counts
		// the decisions given up by their timeout before the watchdog saw the stall: given back at once, a CI run
		// had Redis run 2,077 where 2,065 were allowed (RedisGuardTests has the case without this test's timing)
		assertThat(ran).as("scripts Redis ran after the thaw").isLessThanOrEqualTo(
				RedisGuard.DEFAULT_MAX_IN_FLIGHT + 2 * (10_000 / STALL.toMillis()) + decidedBeforeFreeze);
	}

	/** Decisions Redis answered so far, every route: the round trips timed as successes. */
	private long redisAnswers() {
		return this.meters.find("gateway.ratelimit.redis").tag("result", "success").timers().stream()
			.mapToLong(Timer::count)
			.sum();
	}

	private static long heapAfterGc() {
		System.gc();
		return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
	}

	@Test
	void aBlockedRedisIsDecidingAgainWithinAStallTimeoutOfTheBlockEnding() {
		assertThat(decidedByRedis("open", "erin")).isTrue();
		admin().configResetstat();
		CompletableFuture<Long> block = this.adminConnection.async()
			.dispatch(CommandType.DEBUG, new StatusOutput<>(StringCodec.UTF8),
					new CommandArgs<>(StringCodec.UTF8).add("SLEEP").add("0.5"))
			.toCompletableFuture()
			.thenApply(ok -> System.nanoTime());
		long blockStart = System.nanoTime();
		List<long[]> answers = new ArrayList<>();
		while (System.nanoTime() - blockStart < Duration.ofMillis(1_500).toNanos()) {
			long start = System.nanoTime();
			boolean byRedis = decidedByRedis("open", "erin-" + answers.size());
			answers.add(new long[] { start, System.nanoTime(), byRedis ? 1 : 0 });
			sleep(5);
		}
		long blockEnd = block.join();
		assertThat(Duration.ofNanos(blockEnd - blockStart)).isGreaterThanOrEqualTo(Duration.ofMillis(450));
		long failModeAfter = answers.stream()
			.filter(answer -> answer[0] - blockEnd > STALL.toNanos() && answer[2] == 0)
			.count();
		System.out.println("DEBUG SLEEP 0.5: " + answers.stream().filter(answer -> answer[2] == 0).count() + " of "
				+ answers.size() + " answers by fail-mode, the last "
				+ answers.stream().filter(answer -> answer[2] == 0).mapToLong(answer -> (answer[1] - blockEnd) / 1_000_000)
					.max().orElse(0) + " ms after the block ended; slowest "
				+ answers.stream().mapToLong(answer -> (answer[1] - answer[0]) / 1_000_000).max().orElse(0) + " ms");
		assertThat(failModeAfter).as("fail-mode answers more than a stall timeout after the block ended").isZero();
		assertThat(answers.stream().filter(answer -> answer[0] - blockEnd > STALL.toNanos()).count()).isPositive();
		assertThat(answers.stream().mapToLong(answer -> answer[1] - answer[0]).max().orElseThrow())
			.isLessThanOrEqualTo(BOUND.toNanos());
	}

	@Test
	void aDecisionCancelledBeforeItsBatchIsWrittenSendsNothing() throws Exception {
		assertThat(decidedByRedis("open", "gina")).isTrue();
		long before = scriptCalls();
		// the client leaves in the same event-loop task that asked: the batch is written when the task ends
		this.loop.submit(() -> this.limiter.isAllowed("open", "gina").subscribe().dispose()).get();
		this.loop.submit(() -> { }).get();
		// a command written would have been run by now
		sleep(100);
		assertThat(scriptCalls() - before).as("scripts run for the cancelled decision").isZero();
		assertThat(spent("gina")).as("one request counted on open, the cancelled one not").isEqualTo(1);
	}

	@Test
	void afterAScriptFlushTheScriptIsLoadedOnceForAllDecisions() {
		assertThat(decidedByRedis("open", "frank")).isTrue();
		admin().scriptFlush();
		admin().configResetstat();
		List<Response> answers = onLoop(Flux.range(0, 50)
			.flatMap(i -> this.limiter.isAllowed("open", "flush-" + i))
			.collectList()).block(Duration.ofSeconds(10));
		assertThat(answers).allSatisfy(answer -> assertThat(answer.getHeaders()).containsEntry("X-RateLimit-Limit", "10"));
		assertThat(calls("script|load")).as("SCRIPT LOAD after NOSCRIPT").isEqualTo(1);
		assertThat(calls("eval")).as("the source sent with a decision").isZero();
		assertThat(calls("evalsha")).isEqualTo(100);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
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

	/**
	 * Fail-mode local on a clock of the test's own, Redis killed: a calendar quota is counted per local period
	 * (a Kiritimati month, which ends at 10:00Z) and answers with the route's quota-status and the period's end;
	 * a penalty blocks for its block-for, not for its window; a route with max-delay holds nothing.
	 */
	@Test
	void localFailModeKeepsCalendarQuotasPenaltiesAndQuotaStatus() {
		long monthEnd = Instant.parse("2026-06-30T10:00:00Z").toEpochMilli();
		SetClock clock = new SetClock(monthEnd - 60_000);
		WindowRateLimiter limiter = new WindowRateLimiter(RateLimiterCore.of(this.script, this.guard,
				new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(this.meters), clock),
				null, false);
		String local = "window-rate-limiter.fail-mode=local";
		String twoInstances = "window-rate-limiter.instances=2";
		route(limiter, "quota", "window-rate-limiter.limit=6", "window-rate-limiter.calendar=month",
				"window-rate-limiter.time-zone=Pacific/Kiritimati", "window-rate-limiter.quota-status=403", local,
				twoInstances);
		route(limiter, "penalty", "window-rate-limiter.algorithm=fixed-window", "window-rate-limiter.limit=4",
				"window-rate-limiter.window=1m", "window-rate-limiter.block-for=10m", local, twoInstances);
		route(limiter, "held", "window-rate-limiter.algorithm=fixed-window", "window-rate-limiter.limit=4",
				"window-rate-limiter.window=1m", "window-rate-limiter.max-delay=30s", local, twoInstances);
		this.redis.kill();

		// the month's share, 3, a minute before July begins in Kiritimati
		for (int i = 0; i < 3; i++) {
			assertThat(admit(limiter, "quota").passes()).isTrue();
		}
		Admission spent = admit(limiter, "quota");
		assertThat(spent.passes()).isFalse();
		assertThat(spent.status()).as("the route's quota-status").isEqualTo(403);
		assertThat(spent.headers()).containsEntry("Retry-After", "60")
			.containsEntry("X-RateLimit-Reset", "60")
			.containsEntry("X-RateLimit-Limit", "3");
		clock.set(monthEnd);
		Admission july = admit(limiter, "quota");
		assertThat(july.passes()).as("a new month starts at zero").isTrue();
		assertThat(july.headers()).containsEntry("X-RateLimit-Remaining", "2")
			.containsEntry("X-RateLimit-Reset", Long.toString(Duration.ofDays(31).toSeconds()));

		// the penalty route's share, 2 a minute; the third sets a 10-minute block
		for (int i = 0; i < 2; i++) {
			assertThat(admit(limiter, "penalty").passes()).isTrue();
		}
		Admission refused = admit(limiter, "penalty");
		assertThat(refused.passes()).isFalse();
		assertThat(refused.status()).as("a rate limit, not a quota: the usual status").isZero();
		assertThat(refused.headers()).containsEntry("Retry-After", "600");
		clock.set(monthEnd + Duration.ofMinutes(2).toMillis());
		Admission blocked = admit(limiter, "penalty");
		assertThat(blocked.passes()).as("blocked past the window's end").isFalse();
		assertThat(blocked.headers()).containsEntry("Retry-After", "480").containsEntry("X-RateLimit-Remaining", "0");
		clock.set(monthEnd + Duration.ofMinutes(10).toMillis());
		assertThat(admit(limiter, "penalty").passes()).as("the block over").isTrue();

		// max-delay: the local share passes at once, the next is refused at once, not held
		for (int i = 0; i < 2; i++) {
			Admission now = admit(limiter, "held");
			assertThat(now.passes()).isTrue();
			assertThat(now.delayMillis()).isZero();
		}
		Admission notHeld = admit(limiter, "held");
		assertThat(notHeld.passes()).isFalse();
		assertThat(notHeld.delayMillis()).isZero();
		assertThat(notHeld.headers()).containsKey("Retry-After");
	}

	private Admission admit(WindowRateLimiter limiter, String route) {
		return onLoop(limiter.core().admit(route, "kim", Mono.empty())).block(Duration.ofSeconds(30));
	}

	/** This instance's clock, set by the test. */
	private static final class SetClock extends Clock {

		private volatile long millis;

		SetClock(long millis) {
			this.millis = millis;
		}

		void set(long millis) {
			this.millis = millis;
		}

		@Override
		public long millis() {
			return this.millis;
		}

		@Override
		public Instant instant() {
			return Instant.ofEpochMilli(this.millis);
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			throw new UnsupportedOperationException();
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
