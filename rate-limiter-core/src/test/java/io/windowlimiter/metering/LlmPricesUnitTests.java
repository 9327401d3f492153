package io.windowlimiter.metering;

import java.util.LinkedHashMap;
import java.util.Map;

import io.windowlimiter.metering.LlmPrices.Price;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Budgets in money, their arithmetic (issue 45): prices from the table, exact in whole micro-dollars, each call's
 * price rounded up; no floating point.
 */
class LlmPricesUnitTests {

	/** The table, with a pattern and a default. */
	private static LlmPrices table() {
		Map<String, Map<String, Object>> table = new LinkedHashMap<>();
		table.put("gpt-4o", Map.of("input", "2.50", "output", "10.00", "cached-input", "1.25"));
		table.put("claude-sonnet-4", Map.of("input", 3.00, "output", "15", "cache-read", "0.30", "cache-write", "3.75"));
		table.put("gpt-4o-mini*", Map.of("input", "0.15", "output", "0.60"));
		table.put("gpt-4o*", Map.of("input", "5", "output", "20"));
		table.put("default", Map.of("input", "1", "output", "2"));
		return LlmPrices.of(table);
	}

	@Test
	void pricesAreWholeMicroDollarsPerMillionTokens() {
		Price gpt = table().priceOf("gpt-4o");
		assertThat(gpt).isEqualTo(new Price(2_500_000, 10_000_000, 1_250_000, 2_500_000, 2_500_000, "gpt-4o"));
		assertThat(table().priceOf("claude-sonnet-4"))
			.as("cache reads and writes as configured; cached input at the input price when not configured")
			.isEqualTo(new Price(3_000_000, 15_000_000, 3_000_000, 300_000, 3_750_000, "claude-sonnet-4"));
	}

	/** The boundary: $10 per million output tokens, 1,000 of them cost $0.01; two do not fit $0.015. */
	@Test
	void aCallsPriceIsExactAndRoundedUpToAMicroDollar() {
		Price gpt = table().priceOf("gpt-4o");
		assertThat(gpt.microDollars(0, 0, 1_000, 0, 0)).isEqualTo(10_000);
		long budget = LlmPrices.microDollars("0.015");
		assertThat(budget).isEqualTo(15_000);
		assertThat(budget - gpt.microDollars(0, 0, 1_000, 0, 0)).as("after one call").isEqualTo(5_000);
		assertThat(budget - 2 * gpt.microDollars(0, 0, 1_000, 0, 0)).as("a second does not fit").isNegative();
		// 1,000 input (of which 400 from the cache at 1.25) and 1,000 output: 600 * 2.5 + 400 * 1.25 + 1000 * 10
		assertThat(gpt.microDollars(600, 400, 1_000, 0, 0)).isEqualTo(1_500 + 500 + 10_000);
		// one token at $2.50 a million is 2.5 micro-dollars: rounded up, never down
		assertThat(gpt.microDollars(1, 0, 0, 0, 0)).isEqualTo(3);
		assertThat(gpt.microDollars(0, 0, 0, 0, 0)).isZero();
		Price claude = table().priceOf("claude-sonnet-4");
		// Anthropic: 100 input, 2,000 cache reads, 500 cache writes, 300 output (thinking included)
		assertThat(claude.microDollars(100, 0, 300, 2_000, 500)).isEqualTo(300 + 4_500 + 600 + 1_875);
		assertThat(gpt.microDollars(Long.MAX_VALUE / 2, 0, 0, 0, 0)).as("past a long: the most").isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void aModelIsPricedByItsOwnEntryElseTheMostSpecificPatternElseTheDefault() {
		LlmPrices table = table();
		assertThat(table.priceOf("gpt-4o-mini-2024-07-18").output()).as("gpt-4o-mini* over gpt-4o*").isEqualTo(600_000);
		assertThat(table.priceOf("gpt-4o-2024-08-06").output()).isEqualTo(20_000_000);
		assertThat(table.priceOf("gpt-4o").output()).as("its own entry over the pattern").isEqualTo(10_000_000);
		assertThat(table.priceOf("o3").output()).as("the default").isEqualTo(2_000_000);
		assertThat(table.priceOf(null).output()).as("no model: the default").isEqualTo(2_000_000);
		LlmPrices noDefault = LlmPrices.of(Map.of("gpt-4o", Map.of("input", "2.5", "output", "10")));
		assertThat(noDefault.priceOf("o3")).isNull();
		assertThat(noDefault.priceOf(null)).isNull();
		assertThat(LlmPrices.NONE.isEmpty()).isTrue();
		assertThat(noDefault.isEmpty()).isFalse();
	}

	@Test
	void aBadTableIsRefusedNamingTheProperty() {
		assertThat(refusal(Map.of("gpt-4o", Map.of("input", "2.5"))))
			.isEqualTo("window-rate-limiter.llm-prices.gpt-4o.output is missing; allowed: input and output prices for "
					+ "every model, in USD per million tokens (e.g. { input: 2.50, output: 10.00 })");
		assertThat(refusal(Map.of("gpt-4o", Map.of("input", "2.5", "output", "-1"))))
			.startsWith("window-rate-limiter.llm-prices.gpt-4o.output is '-1'; allowed: US dollars per million tokens");
		assertThat(refusal(Map.of("gpt-4o", Map.of("input", "0.0000001", "output", "1"))))
			.startsWith("window-rate-limiter.llm-prices.gpt-4o.input is '0.0000001'; allowed:");
		assertThat(refusal(Map.of("gpt-4o", Map.of("input", "1e400", "output", "1"))))
			.startsWith("window-rate-limiter.llm-prices.gpt-4o.input is '1e400'");
		assertThat(refusal(Map.of("gpt-4o", Map.of("input", "ten", "output", "1"))))
			.startsWith("window-rate-limiter.llm-prices.gpt-4o.input is 'ten'");
		assertThat(refusal(Map.of("gpt-4o", Map.of("input", "1", "output", "1", "cached", "1"))))
			.startsWith("window-rate-limiter.llm-prices.gpt-4o.cached is no price; allowed: input, output, cached-input");
		assertThat(refusal(Map.of("gpt 4o", Map.of("input", "1", "output", "1"))))
			.startsWith("window-rate-limiter.llm-prices.gpt 4o is not a model");
	}

	@Test
	void amountsOfDollarsAreWholeMicroDollarsBothWays() {
		assertThat(LlmPrices.microDollars("5.00")).isEqualTo(5_000_000);
		assertThat(LlmPrices.microDollars("0.000001")).isEqualTo(1);
		assertThat(catchThrowable(() -> LlmPrices.microDollars("0.0000001"))).isInstanceOf(IllegalArgumentException.class);
		assertThat(catchThrowable(() -> LlmPrices.microDollars("0"))).isInstanceOf(IllegalArgumentException.class);
		assertThat(LlmPrices.dollars(15_000)).isEqualTo("0.015");
		assertThat(LlmPrices.dollars(5_000_000)).isEqualTo("5");
		assertThat(LlmPrices.dollars(3)).isEqualTo("0.000003");
	}

	private static String refusal(Map<String, Map<String, Object>> table) {
		return catchThrowable(() -> LlmPrices.of(table)).getMessage();
	}

}
