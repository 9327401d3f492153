package io.windowlimiter.metering;

import org.junit.jupiter.api.Test;

import static io.windowlimiter.metering.LlmPayloads.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TokenEstimateUnitTests {

	@Test
	void thePromptIsTheBodyLengthOverBytesPerTokenRoundedUpPlusTheOutputCap() {
		String body = "{\"model\":\"gpt-4.1\",\"max_tokens\":300,\"messages\":[{\"role\":\"user\",\"content\":\"Hi!\"}]}";
		LlmRequest request = LlmRequest.read(LlmApi.OPENAI, utf8(body));
		TokenEstimate estimate = TokenEstimate.of(request, 2, 1024, 1_000_000);
		assertThat(estimate.promptTokens()).isEqualTo((body.length() + 1) / 2);
		assertThat(estimate.outputTokens()).isEqualTo(300);
		assertThat(estimate.tokens()).isEqualTo((body.length() + 1) / 2 + 300);
		assertThat(TokenEstimate.of(request, 1, 1024, 1_000_000).promptTokens()).isEqualTo(body.length());
		assertThat(TokenEstimate.of(request, 1_000, 1024, 1_000_000).promptTokens()).isEqualTo(1);
	}

	@Test
	void theDefaultOutputIsReservedWhenTheRequestNamesNoMaximum() {
		LlmRequest request = LlmRequest.read(LlmApi.OPENAI, utf8("{\"input\":\"Tell me a story\"}"));
		assertThat(TokenEstimate.of(request, 2, 777, 1_000_000).outputTokens()).isEqualTo(777);
		assertThat(TokenEstimate.of(request, 1_000_000).outputTokens()).isEqualTo(TokenEstimate.DEFAULT_OUTPUT_TOKENS);
		LlmRequest zero = LlmRequest.read(LlmApi.OPENAI, utf8("{\"input\":\"x\",\"max_output_tokens\":0}"));
		assertThat(TokenEstimate.of(zero, 2, 777, 1_000_000).outputTokens()).isZero();
	}

	@Test
	void noEstimateExceedsTheSmallestLimitSoASmallBudgetAdmitsItsFirstCall() {
		LlmRequest request = LlmRequest.read(LlmApi.ANTHROPIC,
				utf8("{\"max_tokens\":64000,\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(10_000) + "\"}]}"));
		TokenEstimate estimate = TokenEstimate.of(request, 2, 1024, 1_000);
		assertThat(estimate.promptTokens()).isGreaterThan(5_000);
		assertThat(estimate.tokens()).isEqualTo(1_000);
		LlmRequest huge = LlmRequest.read(LlmApi.OPENAI, utf8("{\"max_tokens\":999999999999999999}"));
		assertThat(TokenEstimate.of(huge, 1, 0, Long.MAX_VALUE).tokens()).isEqualTo(999999999999999999L + 33);
		LlmRequest none = LlmRequest.read(LlmApi.OPENAI, utf8("{}"));
		assertThat(TokenEstimate.of(none, 1, Long.MAX_VALUE, Long.MAX_VALUE).tokens()).isEqualTo(Long.MAX_VALUE);
		assertThat(TokenEstimate.of(LlmRequest.read(LlmApi.OPENAI, new byte[0]), 2, 0, 10).tokens()).isEqualTo(1);
	}

	/** Review m6: {@code n: 8, max_tokens: 4000} may use 32,000 output tokens; the estimate reserves them. */
	@Test
	void eachChoiceMayUseTheWholeOutputSoTheOutputIsTimesNOrBestOf() {
		String body = "{\"messages\":[],\"n\":8,\"max_tokens\":4000}";
		TokenEstimate eight = TokenEstimate.of(LlmRequest.read(LlmApi.OPENAI, utf8(body)), 2, 1024, 1_000_000);
		assertThat(eight.outputTokens()).isEqualTo(32_000);
		assertThat(eight.tokens()).isEqualTo((body.length() + 1) / 2 + 32_000);
		LlmRequest bestOf = LlmRequest.read(LlmApi.OPENAI, utf8("{\"prompt\":\"x\",\"n\":2,\"best_of\":3}"));
		assertThat(TokenEstimate.of(bestOf, 2, 1024, 1_000_000).outputTokens()).as("the default output, 3 times")
			.isEqualTo(3 * 1024);
		// still capped at the smallest token limit, whatever the counts
		assertThat(TokenEstimate.of(LlmRequest.read(LlmApi.OPENAI, utf8(body)), 2, 1024, 10_000).tokens()).isEqualTo(10_000);
		LlmRequest huge = LlmRequest.read(LlmApi.OPENAI,
				utf8("{\"messages\":[],\"n\":99999999999999999999,\"max_tokens\":99999999999999999999}"));
		assertThat(TokenEstimate.of(huge, 2, 1024, 50_000)).isEqualTo(new TokenEstimate(TokenEstimate.of(huge, 2, 1024,
				50_000).promptTokens(), Long.MAX_VALUE, 50_000));
		LlmRequest manyOfNone = LlmRequest.read(LlmApi.OPENAI, utf8("{\"messages\":[],\"n\":99999999999999999999,\"max_tokens\":0}"));
		assertThat(TokenEstimate.of(manyOfNone, 2, 1024, 50_000).outputTokens()).isZero();
		LlmRequest nearlyHuge = LlmRequest.read(LlmApi.OPENAI, utf8("{\"messages\":[],\"n\":3,\"max_tokens\":4611686018427387904}"));
		assertThat(TokenEstimate.of(nearlyHuge, 2, 1024, Long.MAX_VALUE).outputTokens()).as("saturated, not wrapped")
			.isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void aRequestTheGatewayRefusesHasNoEstimate() {
		LlmRequest refused = LlmRequest.read(LlmApi.OPENAI, utf8("{\"messages\":[],\"max_tokens\":\"1000\"}"));
		assertThatIllegalArgumentException().isThrownBy(() -> TokenEstimate.of(refused, 1_000))
			.withMessageContaining("max_tokens");
	}

	@Test
	void aBodyThatIsNotJsonIsStillEstimatedByItsLength() {
		LlmRequest request = LlmRequest.read(LlmApi.OPENAI, new byte[4001]);
		TokenEstimate estimate = TokenEstimate.of(request, 4, 10, 1_000_000);
		assertThat(estimate).isEqualTo(new TokenEstimate(1001, 10, 1011));
	}

	@Test
	void refusesArgumentsThatMakeNoEstimate() {
		LlmRequest request = LlmRequest.read(LlmApi.OPENAI, utf8("{}"));
		assertThatIllegalArgumentException().isThrownBy(() -> TokenEstimate.of(request, 0, 1, 1))
			.withMessageContaining("bytes per token");
		assertThatIllegalArgumentException().isThrownBy(() -> TokenEstimate.of(request, 2, -1, 1))
			.withMessageContaining("default output tokens");
		assertThatIllegalArgumentException().isThrownBy(() -> TokenEstimate.of(request, 2, 1, 0))
			.withMessageContaining("ceiling");
	}

}
