package io.windowlimiter.core;

import java.util.List;
import java.util.Map;

import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.metering.LlmApi;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The providers' headers and error objects, figure by figure; the filters' answers are in the shared contract. */
class ProviderAnswersUnitTests {

	/** OpenAI writes its resets as Go prints a duration: {@code 1s}, {@code 6m0s}, {@code 59.5s}, {@code 1h2m3s}. */
	@Test
	void aResetIsWrittenAsGoWritesADuration() {
		assertThat(ProviderAnswers.goDuration(0)).isEqualTo("0s");
		assertThat(ProviderAnswers.goDuration(-5)).isEqualTo("0s");
		assertThat(ProviderAnswers.goDuration(12)).isEqualTo("12ms");
		assertThat(ProviderAnswers.goDuration(1_000)).isEqualTo("1s");
		assertThat(ProviderAnswers.goDuration(59_500)).isEqualTo("59.5s");
		assertThat(ProviderAnswers.goDuration(1_250)).isEqualTo("1.25s");
		assertThat(ProviderAnswers.goDuration(1_001)).isEqualTo("1.001s");
		assertThat(ProviderAnswers.goDuration(360_000)).isEqualTo("6m0s");
		assertThat(ProviderAnswers.goDuration(3_723_000)).isEqualTo("1h2m3s");
		assertThat(ProviderAnswers.goDuration(3_600_000)).isEqualTo("1h0m0s");
		assertThat(ProviderAnswers.goDuration(86_400_000)).isEqualTo("24h0m0s");
	}

	@Test
	void headersOfEachProviderFromTheTightestLimitOfEachUnit() {
		LlmQuotas quotas = new LlmQuotas(new LlmQuotas.Quota(60, 59, 1_500, 1_700_000_000_000L),
				new LlmQuotas.Quota(100_000, 96_000, 360_000, 1_700_000_000_000L), null);
		assertThat(ProviderAnswers.headers(LlmApi.OPENAI, quotas)).containsExactly(
				Map.entry("x-ratelimit-limit-requests", "60"), Map.entry("x-ratelimit-remaining-requests", "59"),
				Map.entry("x-ratelimit-reset-requests", "1.5s"), Map.entry("x-ratelimit-limit-tokens", "100000"),
				Map.entry("x-ratelimit-remaining-tokens", "96000"), Map.entry("x-ratelimit-reset-tokens", "6m0s"));
		// 2023-11-14T22:13:20Z + 1.5 s, rounded up to the second: a client waiting until then is never early
		assertThat(ProviderAnswers.headers(LlmApi.ANTHROPIC, quotas)).containsExactly(
				Map.entry("anthropic-ratelimit-requests-limit", "60"),
				Map.entry("anthropic-ratelimit-requests-remaining", "59"),
				Map.entry("anthropic-ratelimit-requests-reset", "2023-11-14T22:13:22Z"),
				Map.entry("anthropic-ratelimit-tokens-limit", "100000"),
				Map.entry("anthropic-ratelimit-tokens-remaining", "96000"),
				Map.entry("anthropic-ratelimit-tokens-reset", "2023-11-14T22:19:20Z"),
				Map.entry("X-RateLimit-Remaining-Tokens", "96000"));
		assertThat(ProviderAnswers.headers(LlmApi.OPENAI, new LlmQuotas(null, null, null))).isEmpty();
	}

	@Test
	void aRefusalNamesTheLimitWhatWasLeftWhatWasAskedAndWhenToRetry() {
		LlmQuotas.Refusal tokens = new LlmQuotas.Refusal("chat-1", true, false, 3000, 60_000, 640, 1052, 6_500);
		assertThat(ProviderAnswers.refusal(LlmApi.OPENAI, tokens, 429)).isEqualTo("{\"error\":{\"message\":\"Rate limit "
				+ "reached on tokens (limit 'chat-1': 3000 tokens per 1m): Remaining 640, Requested 1052. Please try again in "
				+ "6.5s.\",\"type\":\"tokens\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}");
		assertThat(ProviderAnswers.refusal(LlmApi.ANTHROPIC, tokens, 429)).isEqualTo("{\"type\":\"error\",\"error\":{"
				+ "\"type\":\"rate_limit_error\",\"message\":\"Rate limit reached on tokens (limit 'chat-1': 3000 tokens per 1m): "
				+ "Remaining 640, Requested 1052. Please try again in 6.5s.\"}}");
		LlmQuotas.Refusal slots = new LlmQuotas.Refusal("chat-2", false, true, 4, 600_000, 0, 1, 1_000);
		assertThat(ProviderAnswers.refusal(LlmApi.OPENAI, slots, 429)).isEqualTo("{\"error\":{\"message\":\"Rate limit "
				+ "reached on calls in flight (limit 'chat-2': 4 calls in flight): Remaining 0, Requested 1. Please try again "
				+ "in 1s.\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}");
		LlmQuotas.Refusal remembered = new LlmQuotas.Refusal("chat-0", false, false, 60, 86_400_000, 0, -1, 7_200_000);
		assertThat(ProviderAnswers.message(remembered)).isEqualTo("Rate limit reached on requests (limit 'chat-0': 60 "
				+ "requests per 1d): Remaining 0. Please try again in 2h0m0s.");
	}

	/** The SDKs retry a 429 after its Retry-After, however long: past a minute they are told not to. */
	@Test
	void aRefusalThatWillNotPassWithinAMinuteTellsTheSdksNotToRetry() {
		Admission admission = new Admission(false, Map.of("Retry-After", "3600"), List.of("chat-0"))
			.withQuotas(new LlmQuotas(null, null, new LlmQuotas.Refusal("chat-0", true, false, 10, 3_600_000, 0, 5,
					3_600_000)));
		assertThat(ProviderAnswers.headers(LlmApi.OPENAI, admission)).containsEntry("x-should-retry", "false");
		Admission soon = admission.withQuotas(new LlmQuotas(null, null,
				new LlmQuotas.Refusal("chat-0", true, false, 10, 60_000, 0, 5, 60_000)));
		assertThat(ProviderAnswers.headers(LlmApi.OPENAI, soon)).doesNotContainKey("x-should-retry");
		Admission never = admission.withQuotas(new LlmQuotas(null, null,
				new LlmQuotas.Refusal("chat-0", true, false, 10, 60_000, 0, 50, Decision.NEVER)));
		assertThat(ProviderAnswers.headers(LlmApi.ANTHROPIC, never)).containsEntry("x-should-retry", "false");
		assertThat(ProviderAnswers.message(never.quotas().refusedBy())).endsWith("Remaining 0, Requested 50. This call asks "
				+ "more than the limit allows at once and will not pass; ask for fewer tokens.");
	}

	/** The route's other errors: the problem's detail as the message, typed as each provider types that status. */
	@Test
	void otherErrorsCarryTheProblemsDetailTypedByStatus() {
		String problem = "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":\"a \\\"quoted\\\" "
				+ "field\",\"field\":\"stream\"}";
		assertThat(ProviderAnswers.error(LlmApi.OPENAI, 400, problem)).isEqualTo("{\"error\":{\"message\":\"a \\\"quoted\\\" "
				+ "field\",\"type\":\"invalid_request_error\",\"param\":\"stream\",\"code\":null}}");
		assertThat(ProviderAnswers.error(LlmApi.ANTHROPIC, 400, problem)).isEqualTo("{\"type\":\"error\",\"error\":{\"type\":"
				+ "\"invalid_request_error\",\"message\":\"a \\\"quoted\\\" field\"}}");
		assertThat(ProviderAnswers.error(LlmApi.OPENAI, 503, new BufferedBodies(64).refusalProblem()))
			.startsWith("{\"error\":{\"message\":\"This gateway instance is reading").endsWith(
					"\"type\":\"server_error\",\"param\":null,\"code\":null}}");
		int[] statuses = { 400, 401, 403, 404, 413, 415, 429, 500, 503 };
		String[] types = { "invalid_request_error", "authentication_error", "permission_error", "not_found_error",
				"request_too_large", "invalid_request_error", "rate_limit_error", "api_error", "overloaded_error" };
		for (int i = 0; i < statuses.length; i++) {
			assertThat(ProviderAnswers.anthropicType(statuses[i])).as("%d", statuses[i]).isEqualTo(types[i]);
		}
	}

}
