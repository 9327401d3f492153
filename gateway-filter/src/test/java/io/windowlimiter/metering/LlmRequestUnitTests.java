package io.windowlimiter.metering;

import java.nio.charset.StandardCharsets;

import io.windowlimiter.metering.LlmRequest.Kind;
import org.junit.jupiter.api.Test;

import static io.windowlimiter.metering.LlmPayloads.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LlmRequestUnitTests {

	private static final String CHAT_STREAM = """
			{
			  "model": "gpt-4.1",
			  "messages": [
			    {"role": "developer", "content": "You are a helpful assistant."},
			    {"role": "user", "content": "Hellö, 世界! \\"stream_options\\": {} 🙂"}
			  ],
			  "stream": true,
			  "temperature": 0.2
			}""";

	@Test
	void readsAChatCompletionsStreamThatDidNotAskForUsage() {
		LlmRequest request = read(LlmApi.OPENAI, CHAT_STREAM);
		assertThat(request.kind()).isEqualTo(Kind.CHAT_COMPLETIONS);
		assertThat(request.stream()).isTrue();
		assertThat(request.includeUsage()).isFalse();
		assertThat(request.needsIncludeUsage()).isTrue();
		assertThat(request.maxOutputTokens()).isEqualTo(-1);
		assertThat(request.bodyLength()).isEqualTo(utf8(CHAT_STREAM).length);
	}

	@Test
	void addsStreamOptionsAfterTheOpeningBraceKeepingEveryOtherByte() {
		byte[] body = utf8(CHAT_STREAM);
		LlmRequest request = LlmRequest.read(LlmApi.OPENAI, body);
		String rewritten = new String(request.withIncludeUsage(body), StandardCharsets.UTF_8);
		assertThat(rewritten).isEqualTo("{\"stream_options\":{\"include_usage\":true}," + CHAT_STREAM.substring(1));
		LlmRequest again = read(LlmApi.OPENAI, rewritten);
		assertThat(again.includeUsage()).isTrue();
		assertThat(again.needsIncludeUsage()).isFalse();
		assertThat(again.kind()).isEqualTo(Kind.CHAT_COMPLETIONS);
	}

	@Test
	void completesOrReplacesStreamOptionsTheClientSent() {
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_options\":{}}",
				"{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":true}}");
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_options\": { \"include_obfuscation\": false } }",
				"{\"stream\":true,\"messages\":[],\"stream_options\": {\"include_usage\":true, \"include_obfuscation\": false } }");
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":false,\"x\":1}}",
				"{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":true,\"x\":1}}");
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":null}}",
				"{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":true}}");
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":[1, {\"a\":2}]}}",
				"{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":true}}");
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_options\":null}",
				"{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":true}}");
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_options\":[0, 1]}",
				"{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":true}}");
		assertRewrite("  {\"prompt\":\"Say this is a test\",\"stream\":true}\n",
				"  {\"stream_options\":{\"include_usage\":true},\"prompt\":\"Say this is a test\",\"stream\":true}\n");
	}

	@Test
	void leavesAloneWhatNeedsNoUsageAdded() {
		String[] bodies = { "{\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":true}}",
				"{\"stream\":false,\"messages\":[]}", "{\"messages\":[]}", "{\"stream\":\"true\",\"messages\":[]}",
				"{\"stream\":true,\"input\":\"Tell me a story\"}", "{\"stream\":true,\"model\":\"x\"}",
				"{\"stream\":true,\"messages\":[]", "[{\"stream\":true,\"messages\":[]}]", "", "not json" };
		for (String text : bodies) {
			byte[] body = utf8(text);
			LlmRequest request = LlmRequest.read(LlmApi.OPENAI, body);
			assertThat(request.needsIncludeUsage()).as(text).isFalse();
			assertThat(request.withIncludeUsage(body)).as(text).isSameAs(body);
		}
		byte[] anthropic = utf8("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":1024,\"stream\":true,"
				+ "\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}");
		LlmRequest request = LlmRequest.read(LlmApi.ANTHROPIC, anthropic);
		assertThat(request.kind()).isEqualTo(Kind.MESSAGES);
		assertThat(request.stream()).isTrue();
		assertThat(request.needsIncludeUsage()).isFalse();
		assertThat(request.withIncludeUsage(anthropic)).isSameAs(anthropic);
	}

	@Test
	void tellsTheKindsApart() {
		assertThat(read(LlmApi.OPENAI, "{\"model\":\"gpt-4.1\",\"input\":\"Tell me a story\",\"stream\":true}").kind())
			.isEqualTo(Kind.RESPONSES);
		assertThat(read(LlmApi.OPENAI, "{\"model\":\"gpt-4.1\",\"input\":[{\"role\":\"user\",\"content\":\"x\"}]}")
			.kind()).isEqualTo(Kind.RESPONSES);
		assertThat(read(LlmApi.OPENAI, "{\"prompt\":\"x\"}").kind()).isEqualTo(Kind.COMPLETIONS);
		assertThat(read(LlmApi.OPENAI, "{\"model\":\"x\"}").kind()).isEqualTo(Kind.UNKNOWN);
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[").kind()).isEqualTo(Kind.UNKNOWN);
		assertThat(read(LlmApi.ANTHROPIC, "{}").kind()).isEqualTo(Kind.MESSAGES);
		assertThat(read(LlmApi.ANTHROPIC, "[]").kind()).isEqualTo(Kind.UNKNOWN);
	}

	@Test
	void theOutputCapIsTheLargestOfTheThreeNamesAtTheTopOnly() {
		assertThat(read(LlmApi.OPENAI, "{\"max_tokens\":100,\"max_completion_tokens\":300,\"max_output_tokens\":200}")
			.maxOutputTokens()).isEqualTo(300);
		assertThat(read(LlmApi.OPENAI, "{\"max_output_tokens\":4096,\"input\":\"x\"}").maxOutputTokens())
			.isEqualTo(4096);
		assertThat(read(LlmApi.ANTHROPIC, "{\"max_tokens\":1024,\"messages\":[]}").maxOutputTokens()).isEqualTo(1024);
		assertThat(read(LlmApi.OPENAI, "{\"max_tokens\":0}").maxOutputTokens()).isZero();
		// nested (a tool's schema), not a number, negative, fractional, null: none of them counts
		assertThat(read(LlmApi.OPENAI, "{\"tools\":[{\"max_tokens\":99999}],\"metadata\":{\"max_tokens\":5},"
				+ "\"max_completion_tokens\":\"500\",\"max_tokens\":-1,\"max_output_tokens\":12.5,\"n\":null}")
			.maxOutputTokens()).isEqualTo(-1);
		assertThat(read(LlmApi.OPENAI, "{\"max_tokens\":100,\"messages\":[}").maxOutputTokens()).isEqualTo(-1);
	}

	@Test
	void aKeyWithEscapesOrOfAnotherCaseIsNotTheField() {
		LlmRequest request = read(LlmApi.OPENAI, "{\"messages\":[],\"str\\u0065am\":true,\"Stream\":true}");
		assertThat(request.stream()).isFalse();
	}

	@Test
	void refusesToRewriteAnotherBody() {
		byte[] body = utf8(CHAT_STREAM);
		LlmRequest request = LlmRequest.read(LlmApi.OPENAI, body);
		assertThatIllegalArgumentException().isThrownBy(() -> request.withIncludeUsage(utf8("{}")))
			.withMessageContaining("not the body");
	}

	@Test
	void routeNamesParseCaseInsensitivelyAndABadOneSaysWhatIsAllowed() {
		assertThat(LlmApi.of("OpenAI")).isEqualTo(LlmApi.OPENAI);
		assertThat(LlmApi.of(" anthropic ")).isEqualTo(LlmApi.ANTHROPIC);
		assertThat(LlmApi.ANTHROPIC.routeName()).isEqualTo("anthropic");
		assertThatIllegalArgumentException().isThrownBy(() -> LlmApi.of("gemini"))
			.withMessage("llm: 'gemini' is not an API this gateway meters; allowed: openai, anthropic");
	}

	private static void assertRewrite(String before, String after) {
		byte[] body = utf8(before);
		LlmRequest request = LlmRequest.read(LlmApi.OPENAI, body);
		assertThat(request.needsIncludeUsage()).as(before).isTrue();
		assertThat(new String(request.withIncludeUsage(body), StandardCharsets.UTF_8)).isEqualTo(after);
		assertThat(read(LlmApi.OPENAI, after).includeUsage()).as(after).isTrue();
	}

	private static LlmRequest read(LlmApi api, String body) {
		return LlmRequest.read(api, utf8(body));
	}

}
