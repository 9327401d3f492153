package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.netty.channel.DefaultEventLoop;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the decision script reaches Redis: the commands of one event-loop task in one write, the script's
 * source when Redis lost it, and a connection fetched anew when Spring Data Redis closed its own.
 */
class ScriptSenderTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final WindowPolicy POLICY = new WindowPolicy(Algorithm.FIXED_WINDOW, 100_000,
			Duration.ofDays(366)); // no window edge between a test's decisions: each counts those before it

	private final RedisTestServer redis = RedisTestServer.get();

	private final LettuceConnectionFactory factory = new LettuceConnectionFactory(
			new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()));

	private final LimitScript script = script(this.factory);

	private final DefaultEventLoop loop = new DefaultEventLoop();

	@AfterEach
	void close() throws InterruptedException {
		this.loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
		this.factory.destroy();
	}

	@Test
	void decisionsAskedWithinOneEventLoopTaskReachRedisInOneWrite() throws Exception {
		this.script.load().block(TIMEOUT);
		int decisions = 200;
		long readsBefore = readsProcessed();
		CompletableFuture<List<Mono<Verdict>>> asked = new CompletableFuture<>();
		this.loop.execute(() -> {
			List<Mono<Verdict>> verdicts = new ArrayList<>();
			for (int i = 0; i < decisions; i++) {
				// subscribed here, in the task, as a gateway request subscribes its decision
				verdicts.add(decide("client-" + i).cache());
				verdicts.get(i).subscribe();
			}
			asked.complete(verdicts);
		});
		List<Verdict> verdicts = Flux.concat(asked.get(10, TimeUnit.SECONDS)).collectList().block(TIMEOUT);
		long reads = readsProcessed() - readsBefore;

		assertThat(verdicts).hasSize(decisions).allMatch(Verdict::allowed);
		// one write of 200 commands may arrive in a few reads; one write per command would be 200 and more
		// (the INFO calls themselves add one read each)
		assertThat(reads).as("reads Redis processed for %d decisions", decisions).isLessThan(20);
	}

	/**
	 * The settles a busy gateway sends in one pass over its sockets run as one script call per
	 * {@value ScriptSender#MAX_MERGED}, each completed with its own outcome: a reservation settled before
	 * changes nothing among others that are settled now, and a script Redis lost is loaded once more.
	 */
	@Test
	void settlesAskedWithinOneEventLoopTaskRunAsOneScriptCall() throws Exception {
		this.script.load().block(TIMEOUT);
		int settles = ScriptSender.MAX_MERGED + 5;
		List<String> clients = new ArrayList<>();
		List<Verdict> reservations = new ArrayList<>();
		for (int i = 0; i < settles; i++) {
			clients.add("settle-" + UUID.randomUUID());
			reservations.add(decide(clients.get(i), 10).block(TIMEOUT));
		}
		// the first was settled before: merged with the others it must change nothing
		assertThat(settle(clients.get(0), reservations.get(0)).block(TIMEOUT).applied()).isTrue();
		long callsBefore = settleCalls();

		List<Settlement> settled = settledInOneTask(clients, reservations);

		assertThat(settleCalls() - callsBefore).as("script calls for %d settles", settles).isEqualTo(2);
		assertThat(settled.get(0).applied()).isFalse();
		for (int i = 1; i < settles; i++) {
			assertThat(settled.get(i).applied()).as("settle %d", i).isTrue();
			assertThat(settled.get(i).changes()).as("settle %d", i).containsExactly(-7L);
		}
		for (String client : clients) {
			Verdict after = decide(client, 0).block(TIMEOUT);
			assertThat(after.decisions().get(0).remaining()).as(client).isEqualTo(POLICY.limit() - 3);
		}

		// Redis lost the script: the merged call meets NOSCRIPT, and every settle runs once the script is back
		List<String> more = new ArrayList<>();
		List<Verdict> moreReservations = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			more.add("settle-" + UUID.randomUUID());
			moreReservations.add(decide(more.get(i), 10).block(TIMEOUT));
		}
		this.redis.flushScripts();
		assertThat(settledInOneTask(more, moreReservations)).allSatisfy(settlement -> {
			assertThat(settlement.applied()).isTrue();
			assertThat(settlement.changes()).containsExactly(-7L);
		});
	}

	/** Settles each reservation from 10 to 3, all subscribed within one task of the event loop. */
	private List<Settlement> settledInOneTask(List<String> clients, List<Verdict> reservations) throws Exception {
		CompletableFuture<List<Mono<Settlement>>> asked = new CompletableFuture<>();
		this.loop.execute(() -> {
			List<Mono<Settlement>> outcomes = new ArrayList<>();
			for (int i = 0; i < clients.size(); i++) {
				outcomes.add(settle(clients.get(i), reservations.get(i)).cache());
				outcomes.get(i).subscribe(settlement -> { }, error -> { });
			}
			asked.complete(outcomes);
		});
		return Flux.concat(asked.get(10, TimeUnit.SECONDS)).collectList().block(TIMEOUT);
	}

	private Mono<Settlement> settle(String client, Verdict reservation) {
		return settle(this.script, client, reservation);
	}

	private static Mono<Settlement> settle(LimitScript script, String client, Verdict reservation) {
		return script.settle(List.of(key(client)), "sender-test:{" + client + "}:settled", "r-" + client,
				List.of(POLICY), List.of(reservation.decisions().get(0).resetMillis()), reservation.now(), 10, 3, "");
	}

	private long settleCalls() {
		String evalsha = this.redis.info("commandstats").getProperty("cmdstat_evalsha");
		return Long.parseLong(evalsha.substring("calls=".length(), evalsha.indexOf(',')));
	}

	private static String key(String client) {
		return "sender-test:{" + client + "}:fw";
	}

	/**
	 * A settle, which no request waits for, waits on its event loop up to {@link ScriptSender#LINGER_NANOS} for
	 * the next decision and goes in that decision's write: Redis reads the two at once, where a settle alone cost
	 * it a wake-up, a read and a write of its own. Here the decision comes a quarter of the linger after it.
	 */
	@Test
	void aSettleWaitsOnItsLoopForTheNextDecisionAndGoesInItsWrite() throws Exception {
		// a redis-server of this test's own: the shared one's reads also count other tests' clients
		try (RedisTestServer own = RedisTestServer.launch()) {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration(own.host(), own.port()));
			try {
				LimitScript script = script(factory);
				script.load().block(TIMEOUT);
				String client = "linger-" + UUID.randomUUID();
				Verdict reservation = decide(script, client, 10).block(TIMEOUT);
				long readsBefore = readsProcessed(own);
				CompletableFuture<Settlement> settled = new CompletableFuture<>();
				CompletableFuture<Long> decisionAsked = new CompletableFuture<>();
				CompletableFuture<Verdict> decided = new CompletableFuture<>();
				this.loop.execute(() -> settle(script, client, reservation).subscribe(settled::complete,
						settled::completeExceptionally));
				this.loop.schedule(() -> {
					decisionAsked.complete(System.nanoTime());
					decide(script, "linger-other-" + UUID.randomUUID(), 1).subscribe(decided::complete,
							decided::completeExceptionally);
				}, ScriptSender.LINGER_NANOS / 4, TimeUnit.NANOSECONDS);
				Settlement settlement = settled.get(10, TimeUnit.SECONDS);
				long settledAt = System.nanoTime();
				assertThat(decided.get(10, TimeUnit.SECONDS).allowed()).isTrue();
				long reads = readsProcessed(own) - readsBefore;

				assertThat(settlement.applied()).isTrue();
				assertThat(settledAt - decisionAsked.get()).as("the settle answered after the decision was asked")
					.isPositive();
				// the two in one read, and the INFO of this count
				assertThat(reads).as("reads Redis processed for the settle and the decision").isLessThanOrEqualTo(2);
				assertThat(decide(script, client, 0).block(TIMEOUT).decisions().get(0).remaining())
					.isEqualTo(POLICY.limit() - 3);
			}
			finally {
				factory.destroy();
			}
		}
	}

	/** With no decision after it, a settle is written when its linger ends. */
	@Test
	void aSettleAloneIsWrittenWhenItsLingerEnds() throws Exception {
		this.script.load().block(TIMEOUT);
		String client = "alone-" + UUID.randomUUID();
		Verdict reservation = decide(client, 10).block(TIMEOUT);
		CompletableFuture<Long> asked = new CompletableFuture<>();
		CompletableFuture<Long> settled = new CompletableFuture<>();
		this.loop.execute(() -> {
			asked.complete(System.nanoTime());
			settle(client, reservation).subscribe(settlement -> settled.complete(System.nanoTime()),
					settled::completeExceptionally);
		});
		long waited = settled.get(10, TimeUnit.SECONDS) - asked.get();
		// a scheduled task never runs early: the linger, then the round trip
		assertThat(waited).as("the settle waited its linger").isGreaterThanOrEqualTo(ScriptSender.LINGER_NANOS);
		assertThat(Duration.ofNanos(waited)).as("and then went").isLessThan(Duration.ofMillis(500));
		assertThat(decide(client, 0).block(TIMEOUT).decisions().get(0).remaining()).isEqualTo(POLICY.limit() - 3);
	}

	/**
	 * At shutdown Netty drops an event loop's scheduled tasks, and with them a waiting settle's end of wait: the
	 * script, stopped once the web server has answered its last request, has the settles waiting written first.
	 */
	@Test
	void aSettleWaitingWhenItsLoopShutsDownIsWrittenWhenTheScriptStops() throws Exception {
		this.script.load().block(TIMEOUT);
		this.script.start();
		String client = "shutdown-" + UUID.randomUUID();
		Verdict reservation = decide(client, 10).block(TIMEOUT);
		CompletableFuture<Boolean> asked = new CompletableFuture<>();
		CompletableFuture<Settlement> settled = new CompletableFuture<>();
		this.loop.execute(() -> {
			settle(client, reservation).subscribe(settled::complete, settled::completeExceptionally);
			asked.complete(true);
		});
		asked.get(10, TimeUnit.SECONDS);
		this.script.stop();
		this.loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
		assertThat(settled.get(10, TimeUnit.SECONDS).applied()).isTrue();
		assertThat(decide(client, 0).block(TIMEOUT).decisions().get(0).remaining()).isEqualTo(POLICY.limit() - 3);
	}

	@Test
	void decisionsFromOtherThreadsAreWrittenAtOnce() {
		Verdict verdict = decide("plain-thread").block(TIMEOUT);
		assertThat(verdict.allowed()).isTrue();
	}

	@Test
	void theScriptIsSentWholeWhenRedisHasLostIt() {
		decide("before-flush").block(TIMEOUT);
		this.redis.flushScripts();
		Verdict verdict = decide("after-flush").block(TIMEOUT);
		assertThat(verdict.allowed()).isTrue();
		assertThat(verdict.decisions().get(0).remaining()).isEqualTo(POLICY.limit() - 1);
	}

	@Test
	void aConnectionClosedBySpringDataRedisIsReplacedByTheNextDecision() {
		String client = "reset-" + UUID.randomUUID();
		assertThat(decide(client).block(TIMEOUT).allowed()).isTrue();
		// what validateConnection does on a broken connection: close the shared one, make another on demand
		this.factory.resetConnection();
		// the first decision may meet the closed connection; the one after must not
		decide(client).onErrorResume(error -> Mono.empty()).block(TIMEOUT);
		Verdict verdict = decide(client).block(TIMEOUT);
		assertThat(verdict.allowed()).isTrue();
		assertThat(verdict.decisions().get(0).remaining()).isLessThanOrEqualTo(POLICY.limit() - 2);
	}

	private Mono<Verdict> decide(String client) {
		return decide(client, 1);
	}

	private Mono<Verdict> decide(String client, long cost) {
		return decide(this.script, client, cost);
	}

	private static Mono<Verdict> decide(LimitScript script, String client, long cost) {
		return script.decide(List.of(key(client)), LimitScript.arguments(List.of(POLICY), cost, ""));
	}

	private long readsProcessed() {
		return readsProcessed(this.redis);
	}

	private static long readsProcessed(RedisTestServer redis) {
		return Long.parseLong(redis.info("stats").getProperty("total_reads_processed"));
	}

	private static LimitScript script(LettuceConnectionFactory factory) {
		factory.afterPropertiesSet();
		factory.start();
		return new LimitScript(new ReactiveStringRedisTemplate(factory));
	}

}
