package io.windowlimiter.metering;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a response costs in micro-dollars ({@link Usage#chargeMicroDollars}): each figure at its price, OpenAI's
 * cached prompt tokens apart from the rest of its prompt, Anthropic's cache reads and writes apart, reasoning as
 * output; a cut stream at least its reservation; an upstream error nothing.
 */
class UsageMoneyUnitTests {

	private static final LlmPrices PRICES = LlmPrices.of(Map.of(
			"gpt-4o", Map.of("input", "2.50", "output", "10.00", "cached-input", "1.25"),
			"claude-sonnet-4", Map.of("input", "3.00", "output", "15.00", "cache-read", "0.30", "cache-write", "3.75")));

	@Test
	void openAisCachedPromptTokensArePricedApart() {
		// 1,000 prompt tokens of which 600 cached, 50 output: 400 x 2.5 + 600 x 1.25 + 50 x 10 = 2,250
		Usage usage = new Usage(Usage.Outcome.REPORTED, 1_000, 50, 0, 0, 1_050, 0, 600);
		assertThat(usage.chargeMicroDollars(PRICES.priceOf("gpt-4o"), 9_999, 200)).isEqualTo(2_250);
	}

	@Test
	void anthropicsCacheReadsAndWritesArePricedApartAndReasoningIsOutput() {
		// 100 input, 200 output (thinking included), 1,000 cache reads, 400 cache writes: 300 + 3,000 + 300 + 1,500
		Usage usage = new Usage(Usage.Outcome.REPORTED, 100, 200, 400, 1_000, 0, 0);
		assertThat(usage.chargeMicroDollars(PRICES.priceOf("claude-sonnet-4"), 9_999, 200)).isEqualTo(5_100);
	}

	/**
	 * Attack r4, finding 5: a total above the figures (an upstream reporting reasoning apart from its output) was
	 * counted in tokens but priced at nothing; the rest of the total is priced as output.
	 */
	@Test
	void aTotalAboveTheFiguresIsPricedAsOutput() {
		Usage usage = new Usage(Usage.Outcome.REPORTED, 10, 10, 0, 0, 100_020, 0);
		// 10 input at $2.50 (25), then 100,010 output at $10 (1,000,100): 1,000,125 micro-dollars
		assertThat(usage.chargeMicroDollars(PRICES.priceOf("gpt-4o"), 1, 200)).isEqualTo(1_000_125);
		assertThat(new Usage(Usage.Outcome.REPORTED, 0, 0, 0, 0, 100_000, 0).chargeMicroDollars(PRICES.priceOf("gpt-4o"),
				1, 200)).as("a total alone").isEqualTo(1_000_000);
	}

	@Test
	void aCutStreamCostsAtLeastItsReservationAnErrorNothing() {
		LlmPrices.Price price = PRICES.priceOf("gpt-4o");
		Usage cut = new Usage(Usage.Outcome.PARTIAL, 0, 0, 0, 0, 0, 4_000);
		assertThat(cut.chargeMicroDollars(price, 5_000, 200)).as("1,000 tokens streamed: 10,000").isEqualTo(10_000);
		assertThat(cut.chargeMicroDollars(price, 20_000, 200)).isEqualTo(20_000);
		assertThat(new Usage(Usage.Outcome.ERROR, 0, 0, 0, 0, 0, 0).chargeMicroDollars(price, 5_000, 500)).isZero();
		assertThat(Usage.NONE.chargeMicroDollars(price, 5_000, 200)).isEqualTo(5_000);
		assertThat(Usage.NONE.chargeMicroDollars(price, 5_000, 502)).isZero();
	}

	@Test
	void theCachedTokensOfBothOpenAiShapesAreRead() {
		UsageMeter chat = UsageMeter.of(LlmRequest.read(LlmApi.OPENAI, "{\"model\":\"gpt-4o\",\"messages\":[]}"
			.getBytes()), new TokenEstimate(10, 10, 20));
		chat.pass(("{\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":50,"
				+ "\"total_tokens\":1050,\"prompt_tokens_details\":{\"cached_tokens\":600}}}").getBytes(StandardCharsets.UTF_8));
		assertThat(chat.usage().cachedInputTokens()).isEqualTo(600);
		UsageMeter responses = UsageMeter.of(LlmRequest.read(LlmApi.OPENAI, "{\"model\":\"gpt-4o\",\"input\":\"hi\"}"
			.getBytes()), new TokenEstimate(10, 10, 20));
		responses.pass(("{\"id\":\"r\",\"usage\":{\"input_tokens\":1000,\"input_tokens_details\":{\"cached_tokens\":300},"
				+ "\"output_tokens\":50,\"total_tokens\":1050}}").getBytes(StandardCharsets.UTF_8));
		assertThat(responses.usage().cachedInputTokens()).isEqualTo(300);
	}

}
