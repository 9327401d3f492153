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
		return this.script.decide(List.of("sender-test:{" + client + "}:fw"),
				LimitScript.arguments(List.of(POLICY), 1, ""));
	}

	private long readsProcessed() {
		return Long.parseLong(this.redis.info("stats").getProperty("total_reads_processed"));
	}

	private static LimitScript script(LettuceConnectionFactory factory) {
		factory.afterPropertiesSet();
		factory.start();
		return new LimitScript(new ReactiveStringRedisTemplate(factory));
	}

}
