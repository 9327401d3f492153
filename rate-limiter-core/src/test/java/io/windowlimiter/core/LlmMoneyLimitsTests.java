package io.windowlimiter.core;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.RateLimiterCore.Settled;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.metering.LlmApi;
import io.windowlimiter.metering.LlmPrices;
import io.windowlimiter.metering.LlmRequest;
import io.windowlimiter.metering.TokenEstimate;
import io.windowlimiter.metering.UsageMeter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Budgets in money (issue 45) on the real Redis: a {@code unit: usd} limit reserves the price of a call's
 * estimate in whole micro-dollars and is settled to the price charged, exactly at its boundary; a model without a
 * price is refused before anything is counted; a usd limit without a price table stops start-up; a month's budget
 * of thousands of dollars is accepted on a fixed window (calendar quota).
 */
class LlmMoneyLimitsTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	/** gpt-fake: nothing for input, $10 per million output tokens; claude-*: Anthropic's sonnet prices. */
	private static final LlmPrices PRICES = LlmPrices.of(Map.of(
			"gpt-fake", Map.of("input", "0", "output", "10"),
			"claude-*", Map.of("input", "3.00", "output", "15.00", "cache-read", "0.30", "cache-write", "3.75")));

	private final RateLimiterCore core = new RateLimiterCore(new LimitScript(RedisTestServer.get().template()),
			new PolicyRegistry(Map.of(), PRICES), null, false, this.guard, new DenyCache(1_000, System::nanoTime),
			new LocalWindowLimiter(1_000), new RateLimitHeaders(RateLimitHeaders.Names.defaults()),
			new RateLimitMetrics(this.meters), Duration.ofSeconds(10), Clock.systemUTC());

	private final String client = "llm-money-" + UUID.randomUUID();

	private final String route = "spend-" + UUID.randomUUID();

	@AfterEach
	void close() {
		this.guard.close();
	}

	/** 100,000 tokens a day and a budget of {@code dollars} a day, fixed windows. */
	private void route(String dollars) {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].algorithm", "fixed-window");
		args.put("window-rate-limiter.limits[0].limit", "100000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].algorithm", "fixed-window");
		args.put("window-rate-limiter.limits[1].limit", dollars);
		args.put("window-rate-limiter.limits[1].window", "1d");
		args.put("window-rate-limiter.limits[1].unit", "usd");
		args.put("window-rate-limiter.limits[1].name", "team-spend");
		this.core.configure(this.route, args, SlotRelease.ALWAYS, true);
	}

	private Admission call(long promptTokens, long outputTokens, String model) {
		return this.core.admitCall(this.route, this.client,
				new TokenEstimate(promptTokens, outputTokens, promptTokens + outputTokens), model, Mono.empty())
			.block(TIMEOUT);
	}

	private List<Long> remaining() {
		return this.core.peek(this.route, this.client).block(TIMEOUT).decisions().stream()
			.map(decision -> decision.remaining()).toList();
	}

	/** The boundary: $0.015 at $10 per million output tokens admits one 1,000-token call, not two. */
	@Test
	void aBudgetOfFifteenThousandthsOfADollarAdmitsOneThousandTokenCallNotTwo() {
		route("0.015");
		Admission first = call(10, 1_000, "gpt-fake");
		assertThat(first.passes()).isTrue();
		assertThat(first.reservation().microDollars()).as("1,000 output tokens at $10 a million").isEqualTo(10_000);
		assertThat(ProviderAnswers.headers(LlmApi.OPENAI, first.quotas())).containsEntry("X-RateLimit-Remaining-Usd", "0.005")
			.containsEntry("X-RateLimit-Limit-Usd", "0.015");
		assertThat(remaining()).containsExactly(100_000L - 1_010, 5_000L);
		assertThat(this.core.settleCall(first.reservation(), new LlmCharge(1_010, 10_000)).block(TIMEOUT))
			.as("the money as reserved; tokens as reserved").isEqualTo(Settled.UNCHANGED);
		Admission second = call(10, 1_000, "gpt-fake");
		assertThat(second.passes()).isFalse();
		assertThat(second.violated()).containsExactly("team-spend");
		assertThat(second.quotas().refusedBy().money()).isTrue();
		assertThat(second.quotas().refusedBy().asked()).isEqualTo(10_000);
		assertThat(second.quotas().refusedBy().remaining()).isEqualTo(5_000);
		assertThat(ProviderAnswers.message(second.quotas().refusedBy()))
			.startsWith("Budget reached (limit 'team-spend': $0.015 per 1d): Remaining $0.005, Requested $0.01. "
					+ "Please try again in ");
		assertThat(remaining()).as("a refusal counts nothing").containsExactly(100_000L - 1_010, 5_000L);
		assertThat(this.core.knownRefusal(this.route, this.client, 20, 2, Mono.empty()).block(TIMEOUT))
			.as("a smaller call may fit: its body is read and priced").isNull();
		Admission smaller = call(10, 500, "gpt-fake");
		assertThat(smaller.passes()).as("$0.005 fits exactly").isTrue();
		assertThat(remaining()).containsExactly(100_000L - 1_520, 0L);
	}

	/** Settled to the price charged: a refund gives back micro-dollars, a dearer call is charged the rest. */
	@Test
	void aCallIsSettledToThePriceOfWhatItUsed() {
		route("1");
		Admission call = call(100, 1_000, "claude-sonnet-4");
		// 100 prompt at $3, 1,000 output at $15 a million: 300 + 15,000 micro-dollars
		assertThat(call.reservation().microDollars()).isEqualTo(15_300);
		// it used 100 input, 200 output (reasoning included), 1,000 cache reads, 400 cache writes: 5,100
		assertThat(this.core.settleCall(call.reservation(), new LlmCharge(1_700, 5_100)).block(TIMEOUT))
			.isEqualTo(Settled.APPLIED);
		assertThat(remaining()).containsExactly(100_000L - 1_700, 1_000_000L - 5_100);
		Counter settled = this.meters.find("gateway.ratelimit.llm.spend").tag("kind", "settled").tag("model", "claude-*")
			.counter();
		assertThat(settled.count()).as("in dollars, by the price entry").isEqualTo(0.0051);
		Admission dear = call(0, 10, "claude-sonnet-4");
		this.core.settleCall(dear.reservation(), new LlmCharge(10, 20_000)).block(TIMEOUT);
		assertThat(remaining().get(1)).as("charged past its reservation").isEqualTo(1_000_000L - 25_100);
	}

	/** A price above the limit is charged the limit: the client is refused until the window ends, Redis stays exact. */
	@Test
	void aChargeAboveTheLimitCountsTheLimit() {
		route("0.02");
		Admission call = call(1, 1, "gpt-fake");
		this.core.settleCall(call.reservation(), new LlmCharge(2, Long.MAX_VALUE)).block(TIMEOUT);
		assertThat(remaining().get(1)).isEqualTo(0L);
		assertThat(call(0, 0, "gpt-fake").passes()).isFalse();
	}

	/** Without a price for the model (and no default) the call is refused before anything counts. */
	@Test
	void aModelWithoutAPriceIsRefusedBeforeItIsCounted() {
		route("1");
		assertThat(this.core.unpriced(this.route, "gpt-fake")).isNull();
		assertThat(this.core.unpriced(this.route, "claude-opus-4")).as("priced by claude-*").isNull();
		assertThat(this.core.unpriced(this.route, "o3").detail()).contains("'o3'");
		assertThat(this.core.unpriced(this.route, "o3").field()).isEqualTo("model");
		assertThat(this.core.unpriced(this.route, null)).isNotNull();
		String tokensOnly = "tokens-" + UUID.randomUUID();
		this.core.configure(tokensOnly, Map.of("window-rate-limiter.limit", "100", "window-rate-limiter.window", "1m",
				"window-rate-limiter.unit", "tokens"), SlotRelease.ALWAYS, true);
		assertThat(this.core.unpriced(tokensOnly, "o3")).as("no budget in money on that route").isNull();
	}

	/**
	 * Attack r4, finding 1: a model the table does not price, counted by a money limit anyway (an operator's
	 * override on a route without one of its own, where the adapter's 400 does not apply), reserved the whole
	 * budget and was settled to nothing: unlimited calls. It is charged what it reserved.
	 */
	@Test
	void aModelWithoutAPriceCountedByAMoneyLimitIsChargedItsReservation() {
		route("1");
		Admission call = call(10, 10, "o3");
		assertThat(call.passes()).isTrue();
		assertThat(call.reservation().price()).isNull();
		assertThat(call.reservation().microDollars()).as("the most the budget allows").isEqualTo(1_000_000);
		UsageMeter meter = UsageMeter.of(LlmRequest.read(LlmApi.OPENAI, "{\"model\":\"o3\",\"messages\":[]}"
			.getBytes(StandardCharsets.UTF_8)), new TokenEstimate(10, 10, 20));
		meter.pass(("{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5,\"total_tokens\":10}}")
			.getBytes(StandardCharsets.UTF_8));
		LlmCharge charge = LlmSettings.charge(meter, 200, false, call.reservation());
		assertThat(charge).isEqualTo(new LlmCharge(10, 1_000_000));
		this.core.settleCall(call.reservation(), charge).block(TIMEOUT);
		assertThat(remaining().get(1)).isZero();
		assertThat(call(10, 10, "o3").passes()).isFalse();
	}

	/** A month's budget of $5,000 is a calendar quota: no longer refused by the counter's 2^53 bound. */
	@Test
	void aMonthlyBudgetOfThousandsOfDollarsIsAccepted() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].limit", "1000000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].limit", "5000");
		args.put("window-rate-limiter.limits[1].calendar", "month");
		args.put("window-rate-limiter.limits[1].name", "monthly-spend");
		args.put("window-rate-limiter.limits[1].unit", "usd");
		this.core.configure(this.route, args, SlotRelease.ALWAYS, true);
		Admission call = call(1_000, 1_000, "gpt-fake");
		assertThat(call.passes()).isTrue();
		assertThat(remaining().get(1)).isEqualTo(5_000_000_000L - 10_000);
	}

	@Test
	void aMoneyLimitWithoutAPriceTableStopsStartUp() {
		RateLimiterCore bare = RateLimiterCore.of(new LimitScript(RedisTestServer.get().template()), this.guard,
				new DenyCache(10, System::nanoTime), new LocalWindowLimiter(10),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(this.meters), Clock.systemUTC());
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].limit", "1000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].limit", "5");
		args.put("window-rate-limiter.limits[1].window", "1d");
		args.put("window-rate-limiter.limits[1].unit", "usd");
		assertThatThrownBy(() -> bare.configure("chat", args, SlotRelease.ALWAYS, true))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("window-rate-limiter.limits[1].unit is 'usd' and window-rate-limiter.llm-prices "
					+ "prices no model");
	}

	@Test
	void aMoneyLimitIsWrittenInDollarsWithAtMostSixDecimals() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].limit", "1000");
		args.put("window-rate-limiter.limits[0].window", "1d");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		args.put("window-rate-limiter.limits[1].limit", "0.0000001");
		args.put("window-rate-limiter.limits[1].window", "1d");
		args.put("window-rate-limiter.limits[1].unit", "usd");
		assertThatThrownBy(() -> this.core.configure("chat-odd", args, SlotRelease.ALWAYS, true))
			.hasMessageContaining("limits[1].limit is '0.0000001'")
			.hasMessageContaining("at most six decimals");
		args.put("window-rate-limiter.limits[1].limit", "2000");
		assertThatThrownBy(() -> this.core.configure("chat-odd", args, SlotRelease.ALWAYS, true))
			.as("$2,000 a day on the counter: above 10^9 micro-dollars")
			.hasMessageContaining("at most 1000 with sliding-window-counter");
		args.put("window-rate-limiter.limits[1].algorithm", "fixed-window");
		this.core.configure("chat-odd", args, SlotRelease.ALWAYS, true);
	}

}
