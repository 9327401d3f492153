package io.windowlimiter.app.it;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisProcess;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Redis frozen, or killed and restarted, while an LLM stream is in flight, through the packaged jar at its defaults (fail-mode open,
 * {@code redis-timeout} 600 ms, {@code redis-stall-timeout} 400 ms), a real {@code redis-server} and the fake
 * OpenAI upstream. The watched client's stream was admitted, its 300 tokens reserved, before the fault; it ends
 * while Redis is frozen (or dead) and known to hang, so its settle cannot be made. What must hold: the stream reaches the
 * client whole and on time (the settle is not on its path); the client's calls during the fault are answered by
 * the fail-mode within the bound and never charged; the settle is kept (counted {@code deferred}) and sent once
 * Redis answers again, with no call of the client's: the client stands exactly at what it had less the stream's
 * usage, not its reservation (attack report r2, finding 7: before, the settle was dropped and the client stayed
 * charged the reservation). The killed Redis keeps an append-only file synced on every write, so what it counted
 * before the crash is still there after. One jar serves both cases, one after the other (the second fault meets a
 * gateway that went through one; each case's clients and figures are its own).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LlmRedisFaultJarIT {

	private static final int BUDGET = LlmRoutesIT.BUDGET;

	private static final Duration FAULT = Duration.ofSeconds(6);

	/** The stream's events come this far apart: nine events, about 3.6 s. */
	private static final int EVENT_DELAY_MS = 400;

	private static final int CALLS_DURING = 4;

	/**
	 * Script calls Redis may run once back: the one decision written before the stall was known (the probe
	 * client's; a frozen Redis only), the release of what it took, the kept settle's one send and the guard's
	 * trials, at most one per stall timeout of the fault (6 s / 400 ms); the watched client's calls would add to
	 * them, but the exact quota below is what tells those.
	 */
	private static final long REPLAYED_AT_MOST = 1 + 1 + 1 + 15 + 2;

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private RedisProcess redis;

	private FakeLlmServer upstream;

	private GatewayJar gateway;

	@BeforeAll
	void start() {
		this.redis = RedisProcess.launchWith("--appendonly", "yes", "--appendfsync", "always");
		this.upstream = FakeLlmServer.start();
		RouteFile routes = new RouteFile(this.upstream.baseUrl());
		routes.windowRateLimit("llm", List.of(LlmRoutesIT.budget("openai")));
		this.gateway = GatewayJar.start("llm-fault", this.redis.port(), routes.write());
	}

	@AfterAll
	void stop() throws Exception {
		Resources.close(this.gateway, this.upstream, this.redis);
	}

	@Test
	@Order(1)
	void aStreamThatEndsWhileRedisIsFrozenReachesTheClientAndIsSettledOnceRedisIsBack()
			throws Exception {
		long[] before = new long[1];
		streamEndsDuring("frozen", new Fault() {

			@Override
			public void begin() {
				// the signal's process started first: what Redis runs between the count and the freeze is then about 1 ms
				Runnable freeze = LlmRedisFaultJarIT.this.redis.freezeWhenRun();
				before[0] = RedisInfo.scriptCalls(LlmRedisFaultJarIT.this.redis.port());
				freeze.run();
			}

			@Override
			public long endAndCountScripts() {
				LlmRedisFaultJarIT.this.redis.thaw();
				return RedisInfo.scriptCallsOnceQuiet(LlmRedisFaultJarIT.this.redis.port(), 500, 10_000) - before[0];
			}

		});
	}

	@Test
	@Order(2)
	void aStreamThatEndsWhileRedisIsDeadReachesTheClientAndIsSettledOnceRedisIsBack()
			throws Exception {
		streamEndsDuring("killed", new Fault() {

			@Override
			public void begin() {
				LlmRedisFaultJarIT.this.redis.kill();
			}

			@Override
			public long endAndCountScripts() {
				LlmRedisFaultJarIT.this.redis.start();
				// Lettuce reconnects on its own backoff: what it kept for Redis would run then
				RedisInfo.awaitClients(LlmRedisFaultJarIT.this.redis.port(), 1, 20_000);
				return RedisInfo.scriptCallsOnceQuiet(LlmRedisFaultJarIT.this.redis.port(), 500, 10_000);
			}

		});
	}

	/** How a case fails Redis and gets it back. */
	private interface Fault {

		void begin();

		/** Ends the fault with no client sending; returns the script calls Redis ran since it began, once quiet. */
		long endAndCountScripts();

	}

	private void streamEndsDuring(String fault, Fault how) throws Exception {
		SoftAssertions softly = new SoftAssertions();
		String run = Long.toString(System.currentTimeMillis(), 36);
		// the cold JVM's first calls are not what this measures
		for (int i = 0; i < 20; i++) {
			call("warm-" + run + "-" + i, 100);
		}
		String watched = "watched-" + run;
		HttpResponse<String> first = call(watched, 100);
		softly.assertThat(first.headers().firstValue("X-RateLimit-Remaining-Tokens")).as("after the first reservation")
			.hasValue(Integer.toString(BUDGET - 100));
		// settled to its usage, 30 (the fake's 10 in, 20 out): a Redis round trip after the answer
		GatewayJar.sleep(500);

		long streamStarted = System.nanoTime();
		HttpResponse<InputStream> stream = this.http.send(post(watched, FakeLlmServer.chat(300, true))
			.header(FakeLlmServer.HEADER_DELAY_MS, Integer.toString(EVENT_DELAY_MS))
			.build(), HttpResponse.BodyHandlers.ofInputStream());
		softly.assertThat(stream.statusCode()).isEqualTo(200);
		softly.assertThat(stream.headers().firstValue("X-RateLimit-Remaining-Tokens"))
			.as("the stream's reservation of 300 after the first call settled to 30")
			.hasValue(Integer.toString(BUDGET - 30 - 300));
		InputStream body = stream.body();
		ByteArrayOutputStream received = new ByteArrayOutputStream();
		int firstByte = body.read();
		long firstByteNanos = System.nanoTime() - streamStarted;
		received.write(firstByte);
		CompletableFuture<Long> streamEnded = CompletableFuture.supplyAsync(() -> {
			try {
				body.transferTo(received);
				return System.nanoTime() - streamStarted;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});

		long deferredBefore = this.gateway.settles("deferred");
		long failModeBefore = this.gateway.failModeAnswers();
		long faultBegan = System.nanoTime();
		how.begin();
		// another client's call shows the guard that Redis hangs: its decision, sent before that was known, is the
		// one a thawed Redis may run
		long probeStarted = System.nanoTime();
		HttpResponse<String> probe = call("probe-" + run, 100);
		softly.assertThat(probe.statusCode()).as("the probe client's call, answered by the fail-mode").isEqualTo(200);
		softly.assertThat(Duration.ofNanos(System.nanoTime() - probeStarted)).as("the probe client's answer")
			.isLessThan(RedisFaultJarIT.ANSWER_WITHIN);
		GatewayJar.sleep(500);
		for (int i = 0; i < CALLS_DURING; i++) {
			long sent = System.nanoTime();
			HttpResponse<String> during = call(watched, 100);
			softly.assertThat(during.statusCode()).as("the watched client's call %d while Redis is " + fault, i).isEqualTo(200);
			softly.assertThat(Duration.ofNanos(System.nanoTime() - sent)).as("its answer")
				.isLessThan(RedisFaultJarIT.ANSWER_WITHIN);
		}
		long streamNanos = streamEnded.get(10, TimeUnit.SECONDS);
		softly.assertThat(System.nanoTime() - faultBegan).as("the stream ended while Redis was " + fault)
			.isLessThan(FAULT.toNanos());
		GatewayJar.sleep(Math.max(0, (faultBegan + FAULT.toNanos() - System.nanoTime()) / 1_000_000));
		long deferred = this.gateway.settles("deferred") - deferredBefore;
		long failMode = this.gateway.failModeAnswers() - failModeBefore;

		long replayed = how.endAndCountScripts();
		// the stall ends with the answer to a trial the next call sets off (that call the fail-mode answers)
		HttpResponse<String> after = call(watched, 100);
		for (int i = 0; i < 20 && after.headers().firstValue("X-RateLimit-Remaining-Tokens").isEmpty(); i++) {
			GatewayJar.sleep(100);
			after = call(watched, 100);
		}

		String text = received.toString(StandardCharsets.UTF_8);
		System.out.println("[llm-fault] Redis " + fault + ": first byte of the stream after " + firstByteNanos / 1_000_000 + " ms, whole after "
				+ streamNanos / 1_000_000 + " ms; fail-mode answers " + failMode + ", settles deferred " + deferred
				+ ", script calls Redis ran once back " + replayed + ", tokens left after "
				+ after.headers().firstValue("X-RateLimit-Remaining-Tokens").orElse("none") + " (+100 reserved by that call)");

		softly.assertThat(text).as("the stream reached the client whole, without the usage chunk")
			.endsWith("data: [DONE]\n\n")
			.doesNotContain("prompt_tokens");
		long upstreamNanos = Duration.ofMillis(9L * EVENT_DELAY_MS).toNanos();
		softly.assertThat(firstByteNanos).as("the first byte before the upstream ended").isLessThan(upstreamNanos / 2);
		softly.assertThat(streamNanos).as("the stream's end waits for no settle")
			.isLessThan(upstreamNanos + RedisFaultJarIT.ANSWER_WITHIN.toNanos());
		softly.assertThat(failMode).as("fail-mode answers: the probe's and the watched client's")
			.isEqualTo(1 + CALLS_DURING);
		softly.assertThat(deferred).as("the stream's settle, kept for when Redis answers").isEqualTo(1);
		softly.assertThat(replayed).as("script calls Redis ran once back").isLessThanOrEqualTo(REPLAYED_AT_MOST);
		softly.assertThat(after.statusCode()).isEqualTo(200);
		// 1,000 less the first call's 30 and the stream's 30 (its reservation of 300, settled once Redis answered);
		// the calls the fail-mode answered charged nothing; less the 100 this call reserves
		softly.assertThat(after.headers().firstValue("X-RateLimit-Remaining-Tokens"))
			.as("the watched client's tokens after the fault").hasValue(Integer.toString(BUDGET - 30 - 30 - 100));
		// 100 calls less the first, the stream and this one
		softly.assertThat(after.headers().firstValue("X-RateLimit-Remaining")).as("its calls after the fault")
			.hasValue("97");
		softly.assertAll();
	}

	private HttpResponse<String> call(String client, int tokens) throws Exception {
		return this.http.send(post(client, FakeLlmServer.chat(tokens, false)).build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest.Builder post(String client, String body) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.gateway.port() + "/llm/v1/chat/completions"))
			.timeout(Duration.ofSeconds(10))
			.header("X-API-Key", client)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
	}

}
