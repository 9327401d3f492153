package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the core answers of an LLM call before its body is read ({@link RateLimiterCore#knownRefusal}), on the
 * real Redis: a client the deny cache remembers refused by a request limit is refused whatever its body; one
 * refused by its token limit only while what it had left is below the least its call can be estimated at (from
 * the body's declared length), and for a second at most (calls settled on another instance may have given
 * tokens back since); anyone else is decided by Redis once the body is read. Route: 1,000 tokens and 2 calls a
 * day, fixed windows.
 */
class LlmKnownRefusalTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final RateLimiterCore core = RateLimiterCore.of(new LimitScript(RedisTestServer.get().template()), this.guard,
			new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(new SimpleMeterRegistry()),
			Clock.systemUTC());

	private final String client = "llm-known-" + UUID.randomUUID();

	@BeforeEach
	void route() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].algorithm", "fixed-window");
		args.put("window-rate-limiter.limits[0].limit", "1000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].algorithm", "fixed-window");
		args.put("window-rate-limiter.limits[1].limit", "2");
		args.put("window-rate-limiter.limits[1].window", "1d");
		this.core.configure("chat", args, SlotRelease.ALWAYS, true);
	}

	@AfterEach
	void close() {
		this.guard.close();
	}

	private Admission call(long tokens) {
		return this.core.admitTokens("chat", this.client, tokens, Mono.empty()).block(TIMEOUT);
	}

	/** The refusal known before a body of this declared length is read; null when Redis must decide. */
	private Admission known(long bodyLength) {
		return this.core.knownRefusal("chat", this.client, bodyLength, 2, Mono.empty()).block(TIMEOUT);
	}

	@Test
	void aClientRefusedByItsRequestLimitIsRefusedWhateverItsBody() {
		assertThat(known(4000)).as("nothing known yet").isNull();
		call(10);
		call(10);
		assertThat(known(4000)).as("allowed so far: nothing remembered").isNull();
		Admission byRedis = call(10);
		assertThat(byRedis.passes()).isFalse();
		for (long length : new long[] { -1, 1, 8000 }) {
			Admission known = known(length);
			assertThat(known).as("a body of " + length).isNotNull();
			assertThat(known.passes()).isFalse();
			assertThat(known.violated()).containsExactly("chat-1");
			assertThat(known.headers()).containsKey("Retry-After").containsEntry("X-RateLimit-Remaining", "0");
		}
	}

	/**
	 * A settle that gives tokens back cannot let in a client its request limit refused: the denial stays known.
	 * Before, any refund forgot the client's denial whichever limit it was by, so a call settled just after the
	 * refusal (the settle of an earlier call reaching Redis late) had the next call's body read and sent to Redis
	 * (LlmRoutesIT's known-refusal case failed 2 runs in 6 so).
	 */
	@Test
	void aTokenRefundKeepsARefusalByTheRequestLimit() {
		call(10);
		Admission second = call(10);
		assertThat(call(10).passes()).as("the calls of the day").isFalse();
		assertThat(this.core.settleTokens(second.reservation(), 5).block(TIMEOUT)).isEqualTo(Settled.APPLIED);
		Admission known = known(4000);
		assertThat(known).as("5 tokens given back: no call more a day").isNotNull();
		assertThat(known.violated()).containsExactly("chat-1");
	}

	/** A refund on the limit that refused does end its denial: Redis decides the next call. */
	@Test
	void aTokenRefundEndsARefusalByTheTokenLimit() {
		Admission used = call(900);
		assertThat(call(300).passes()).isFalse();
		assertThat(known(400)).as("remembered").isNotNull();
		assertThat(this.core.settleTokens(used.reservation(), 100).block(TIMEOUT)).isEqualTo(Settled.APPLIED);
		assertThat(known(400)).as("800 tokens given back").isNull();
		assertThat(call(300).passes()).isTrue();
	}

	@Test
	void aClientRefusedByItsTokenLimitIsRefusedOnlyWhenNoCallOfThatBodyCouldFitAndForASecond() throws Exception {
		Admission used = call(900);
		this.core.settleTokens(used.reservation(), 900).block(TIMEOUT);
		Admission byRedis = call(300);
		assertThat(byRedis.passes()).as("100 tokens left").isFalse();
		assertThat(byRedis.violated()).containsExactly("chat-0");
		Admission known = known(400);
		assertThat(known).as("400 bytes: at least 200 tokens, more than the 100 left").isNotNull();
		assertThat(known.passes()).isFalse();
		assertThat(known.violated()).containsExactly("chat-0");
		assertThat(known(200)).as("200 bytes: from 100 tokens, which may fit").isNull();
		assertThat(known(-1)).as("a body of unknown length may be small").isNull();
		Thread.sleep(Admissions.TOKEN_DENIAL_TRUSTED_MILLIS + 100);
		assertThat(known(400)).as("a second later: tokens may have been given back elsewhere; Redis decides").isNull();
	}

}
