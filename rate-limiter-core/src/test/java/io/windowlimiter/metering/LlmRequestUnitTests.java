package io.windowlimiter.metering;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.windowlimiter.core.LlmSettings;
import io.windowlimiter.core.ProviderAnswers;
import io.windowlimiter.gateway.test.DocsSamples;
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
				"{\"stream\":false,\"messages\":[]}", "{\"messages\":[]}", "{\"stream\":null,\"messages\":[]}",
				"{\"stream\":true,\"input\":\"Tell me a story\"}", "{\"stream\":true,\"model\":\"x\"}",
				"{\"stream\":true,\"prompt\":{\"id\":\"pmpt_1\",\"version\":\"2\"}}",
				"[{\"stream\":true,\"messages\":[]}]", "", "not json" };
		for (String text : bodies) {
			byte[] body = utf8(text);
			LlmRequest request = LlmRequest.read(LlmApi.OPENAI, body);
			assertThat(request.refusal()).as(text).isNull();
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
		assertThat(read(LlmApi.OPENAI, "{\"prompt\":[\"x\",\"y\"]}").kind()).isEqualTo(Kind.COMPLETIONS);
		// the Responses API's prompt template: asking it for include_usage would be refused
		assertThat(read(LlmApi.OPENAI, "{\"prompt\":{\"id\":\"pmpt_1\"},\"stream\":true}").kind())
			.isEqualTo(Kind.RESPONSES);
		assertThat(read(LlmApi.OPENAI, "{\"prompt\":{\"id\":\"pmpt_1\"},\"input\":\"x\"}").kind())
			.isEqualTo(Kind.RESPONSES);
		assertThat(read(LlmApi.OPENAI, "{\"model\":\"x\"}").kind()).isEqualTo(Kind.UNKNOWN);
		assertThat(read(LlmApi.OPENAI, "[{\"messages\":[]}]").kind()).isEqualTo(Kind.UNKNOWN);
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
		assertThat(read(LlmApi.OPENAI, "{\"max_tokens\":-0}").maxOutputTokens()).isZero();
		// nested (a tool's schema, metadata) or null: none of them counts
		LlmRequest nested = read(LlmApi.OPENAI, "{\"tools\":[{\"max_tokens\":99999}],\"metadata\":{\"max_tokens\":5},"
				+ "\"max_completion_tokens\":null,\"n\":null}");
		assertThat(nested.refusal()).isNull();
		assertThat(nested.maxOutputTokens()).isEqualTo(-1);
		assertThat(nested.choices()).isEqualTo(1);
		// larger than a long: as large as can be (the estimate is capped at the smallest token limit)
		assertThat(read(LlmApi.OPENAI, "{\"max_tokens\":99999999999999999999999}").maxOutputTokens())
			.isEqualTo(Long.MAX_VALUE);
	}

	/** Keys are read as JSON decodes them (issue 44 item 2): an escaped spelling of a field is that field. */
	@Test
	void anEscapedKeyIsTheFieldItDecodesTo() {
		LlmRequest stream = read(LlmApi.OPENAI, "{\"m\\u0065ssages\":[],\"str\\u0065am\":true}");
		assertThat(stream.refusal()).isNull();
		assertThat(stream.kind()).isEqualTo(Kind.CHAT_COMPLETIONS);
		assertThat(stream.stream()).isTrue();
		assertThat(stream.needsIncludeUsage()).isTrue();
		assertThat(read(LlmApi.OPENAI, "{\"\\u006dax_tokens\":500,\"\\u006E\":3}").maxOutputTokens()).isEqualTo(500);
		assertThat(read(LlmApi.OPENAI, "{\"\\u006dax_tokens\":500,\"\\u006E\":3}").choices()).isEqualTo(3);
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"stream_options\":{\"include_usag\\u0065\":true},\"stream\":true}")
			.includeUsage()).isTrue();
		// the client's own stream_options, escaped, is completed in place: no second one is added before it
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_opti\\u006fns\":{\"include_usage\":false}}",
				"{\"stream\":true,\"messages\":[],\"stream_opti\\u006fns\":{\"include_usage\":true}}");
		assertRewrite("{\"stream\":true,\"messages\":[],\"stream_options\":{\"\\u0069nclude_usage\":null}}",
				"{\"stream\":true,\"messages\":[],\"stream_options\":{\"\\u0069nclude_usage\":true}}");
		// a key that decodes to something else is not the field
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"str\\/eam\":true,\"stream\\u0000\":true}").stream()).isFalse();
	}

	/**
	 * A field the meter reads, given twice under any spelling (raw or escaped), is refused naming it: the
	 * upstream keeps the last, the gateway would have to guess (issue 44 item 2).
	 */
	@Test
	void aFieldGivenTwiceUnderAnySpellingIsRefusedNamingIt() {
		String[][] fields = { { "stream", "true", "str\\u0065am" }, { "stream_options", "{}", "stream_opti\\u006fns" },
				{ "model", "\"m\"", "mod\\u0065l" }, { "max_tokens", "5", "\\u006dax_tokens" },
				{ "max_completion_tokens", "5", "max_completion_tok\\u0065ns" },
				{ "max_output_tokens", "5", "max_output_tok\\u0065ns" }, { "n", "2", "\\u006e" },
				{ "best_of", "2", "best\\u005fof" }, { "messages", "[]", "m\\u0065ssages" }, { "input", "\"x\"", "\\u0069nput" },
				{ "prompt", "\"x\"", "pr\\u006fmpt" } };
		for (String[] field : fields) {
			String raw = "\"" + field[0] + "\":" + field[1];
			String escaped = "\"" + field[2] + "\":" + field[1];
			for (String body : new String[] { "{" + raw + "," + raw + "}", "{" + raw + ",\"temperature\":1," + escaped + "}",
					"{" + escaped + "," + raw + "}", "{" + escaped + "," + escaped + "}" }) {
				LlmRequest request = read(LlmApi.OPENAI, body);
				assertThat(request.refusal()).as(body).isNotNull();
				assertThat(request.refusal().field()).as(body).isEqualTo(field[0]);
				assertThat(request.refusal().detail()).contains(field[0], "more than once");
				assertThat(request.needsIncludeUsage()).isFalse();
			}
		}
		// the body: the upstream streams without usage, the gateway read the first
		LlmRequest twice = read(LlmApi.OPENAI, "{\"stream\":true,\"stream_options\":{\"include_usage\":true},"
				+ "\"stream_options\":{\"include_usage\":false},\"messages\":[]}");
		assertThat(twice.refusal().field()).isEqualTo("stream_options");
		// and on Anthropic's API alike
		assertThat(read(LlmApi.ANTHROPIC, "{\"max_tokens\":1024,\"max_tokens\":64000,\"messages\":[]}").refusal().field())
			.isEqualTo("max_tokens");
		// nested: include_usage twice in the one stream_options, raw or escaped
		for (String body : new String[] { "{\"stream\":true,\"stream_options\":{\"include_usage\":true,\"include_usage\":false}}",
				"{\"stream\":true,\"stream_options\":{\"include_usage\":true,\"x\":1,\"include_usag\\u0065\":false}}" }) {
			assertThat(read(LlmApi.OPENAI, body).refusal()).as(body)
				.isEqualTo(new LlmRequest.Refusal("stream_options.include_usage",
						"stream_options.include_usage appears more than once in the request body (escaped spellings "
								+ "included): an upstream reads the last one, so the gateway cannot meter the call; send it once"));
		}
		// the same key twice elsewhere is the upstream's business: nothing the meter reads
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"temperature\":1,\"temperature\":2,\"metadata\":{\"n\":1,\"n\":2},"
				+ "\"tools\":[{\"max_tokens\":1,\"max_tokens\":2}]}").refusal()).isNull();
	}

	/** The 400's body, naming the field; on an OpenAI route as docs/llm-routes.md shows it. */
	@Test
	void theRefusalIsAProblemBodyNamingTheField() {
		LlmRequest twice = read(LlmApi.OPENAI, "{\"stream\":true,\"stream_options\":{\"include_usage\":true},"
				+ "\"stream_options\":{\"include_usage\":false},\"messages\":[]}");
		assertThat(LlmSettings.badRequestProblem(twice.refusal())).isEqualTo("{\"type\":\"about:blank\",\"title\":"
				+ "\"Bad Request\",\"status\":400,\"detail\":\"stream_options appears more than once in the request body "
				+ "(escaped spellings included): an upstream reads the last one, so the gateway cannot meter the call; send "
				+ "it once\",\"field\":\"stream_options\"}");
		DocsSamples.Answer sample = DocsSamples.answer("docs/llm-routes.md", "duplicate-field");
		// an LLM route answers it in its provider's shape: the page shows OpenAI's
		DocsSamples.assertSameShape("docs/llm-routes.md:" + sample.line(), sample.json(),
				ProviderAnswers.error(LlmApi.OPENAI, 400, LlmSettings.badRequestProblem(twice.refusal())), sample.varying());
		LlmRequest cut = read(LlmApi.OPENAI, "{\"stream\":true,\"messages\":[");
		assertThat(LlmSettings.badRequestProblem(cut.refusal())).startsWith("{\"type\":\"about:blank\",\"title\":"
				+ "\"Bad Request\",\"status\":400,\"detail\":\"The request body starts as a JSON object").doesNotContain("field");
	}

	/** A compressed body's 415 on an OpenAI route, as docs/llm-routes.md shows it (both adapters answer this body). */
	@Test
	void aContentCodingIsRefusedWithThePagesProblemBody() {
		DocsSamples.Answer sample = DocsSamples.answer("docs/llm-routes.md", "content-coding");
		DocsSamples.assertSameShape("docs/llm-routes.md:" + sample.line(), sample.json(), ProviderAnswers.error(
				LlmApi.OPENAI, LlmSettings.UNSUPPORTED_ENCODING_STATUS, LlmSettings.unsupportedEncodingProblem(List.of("gzip"))),
				sample.varying());
	}

	/** Go's decoder takes {@code Stream} (and {@code ſtream}) for stream; OpenAI refuses it; the gateway refuses it too. */
	@Test
	void aFieldSpelledInAnotherCaseIsRefusedNamingIt() {
		String[][] spellings = { { "Stream", "stream" }, { "STREAM_OPTIONS", "stream_options" }, { "\\u017ftream", "stream" },
				{ "ſtream", "stream" }, { "max_to\\u212aens", "max_tokens" }, { "N", "n" }, { "Best_Of", "best_of" },
				{ "\\u0131nput", "input" }, { "İnput", "input" }, { "Model", "model" }, { "MESSAGES", "messages" } };
		for (String[] spelling : spellings) {
			String body = "{\"messages\":[],\"" + spelling[0] + "\":true}";
			if (spelling[1].equals("messages")) {
				body = "{\"" + spelling[0] + "\":[]}";
			}
			LlmRequest request = read(LlmApi.OPENAI, body);
			assertThat(request.refusal()).as(body).isNotNull();
			assertThat(request.refusal().field()).as(body).isEqualTo(spelling[1]);
			assertThat(request.refusal().detail()).contains("another case");
		}
		assertThat(read(LlmApi.OPENAI, "{\"stream\":true,\"stream_options\":{\"Include_Usage\":false}}").refusal().field())
			.isEqualTo("stream_options.include_usage");
		// near names are other fields
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"streams\":true,\"stream_option\":{},\"nn\":2,\"stréam\":1}")
			.refusal()).isNull();
	}

	/** Lenient upstreams read "true" or 1 as true; OpenAI refuses them: so does the gateway, naming the field. */
	@Test
	void streamOtherThanTrueFalseOrNullIsRefused() {
		for (String value : new String[] { "\"true\"", "1", "0", "{}", "[]", "\"yes\"" }) {
			LlmRequest request = read(LlmApi.OPENAI, "{\"messages\":[],\"stream\":" + value + "}");
			assertThat(request.refusal()).as(value).isNotNull();
			assertThat(request.refusal().field()).isEqualTo("stream");
		}
	}

	/**
	 * Odd numbers in the counts the estimate reads: each is either read as the upstream reads it or refused
	 * naming the field; none reads as a small or absent count.
	 */
	@Test
	void aCountIsAWholeNumberInDigitsOrRefusedNamingIt() {
		String[][] refused = { { "max_tokens", "1e3" }, { "max_tokens", "1000.0" }, { "max_tokens", "-1" },
				{ "max_tokens", "\"1000\"" }, { "max_tokens", "true" }, { "max_tokens", "{}" },
				{ "max_completion_tokens", "1E+3" }, { "max_output_tokens", "-99999999999999999999999" }, { "n", "0" },
				{ "n", "-2" }, { "n", "1.5" }, { "n", "\"4\"" }, { "best_of", "0" }, { "best_of", "2e0" } };
		for (String[] field : refused) {
			String body = "{\"messages\":[],\"" + field[0] + "\":" + field[1] + "}";
			LlmRequest request = read(LlmApi.OPENAI, body);
			assertThat(request.refusal()).as(body).isNotNull();
			assertThat(request.refusal().field()).as(body).isEqualTo(field[0]);
			assertThat(request.refusal().detail()).as(body).contains(field[0], "allowed: a whole number from");
		}
		LlmRequest huge = read(LlmApi.OPENAI, "{\"messages\":[],\"max_tokens\":99999999999999999999999,\"n\":99999999999999999999}");
		assertThat(huge.maxOutputTokens()).isEqualTo(Long.MAX_VALUE);
		assertThat(huge.choices()).isEqualTo(Long.MAX_VALUE);
	}

	/** Each of n choices (best_of generations) may use the whole maximum: the larger of the two counts. */
	@Test
	void nAndBestOfAreHowManyOutputsTheUpstreamMayGenerate() {
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"n\":4}").choices()).isEqualTo(4);
		assertThat(read(LlmApi.OPENAI, "{\"prompt\":\"x\",\"n\":2,\"best_of\":5}").choices()).isEqualTo(5);
		assertThat(read(LlmApi.OPENAI, "{\"prompt\":\"x\",\"best_of\":1,\"n\":3}").choices()).isEqualTo(3);
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[]}").choices()).isEqualTo(1);
		assertThat(read(LlmApi.OPENAI, "not json").choices()).isEqualTo(1);
	}

	/**
	 * A body that starts as a JSON object must be one the scanner reads whole: one it cannot (cut, NaN, deeper than
	 * it keeps) could be read by a lenient upstream as a stream the gateway never saw.
	 */
	@Test
	void aBodyThatStartsAsAnObjectButIsNotOneWholeIsRefused() {
		String deep = "{\"stream\":true,\"messages\":[],\"tools\":" + "[".repeat(JsonScanner.MAX_DEPTH) + "]".repeat(JsonScanner.MAX_DEPTH) + "}";
		for (String body : new String[] { "{\"stream\":true,\"messages\":[]", " \n{\"stream\":true,\"temperature\":NaN,\"messages\":[]}",
				"{\"stream\":true,\"messages\":[],\"x\":Infinity}", deep, "{\"messages\":[]} {\"stream\":true}",
				"{\"m\\x\":1}", "{\"max_tokens\":100,\"messages\":[}" }) {
			LlmRequest request = read(LlmApi.OPENAI, body);
			assertThat(request.refusal()).as(body).isNotNull();
			assertThat(request.refusal().field()).isNull();
			assertThat(request.refusal().detail()).contains("starts as a JSON object");
		}
		// what does not start as an object is not JSON to any upstream's chat endpoint: estimated by its length
		for (String body : new String[] { "", "not json", "[{\"stream\":true}]", "--boundary\r\nContent-Disposition: form-data" }) {
			assertThat(read(LlmApi.OPENAI, body).refusal()).as(body).isNull();
		}
	}

	/** Python's json.loads reads bytes in UTF-16 and UTF-32, and UTF-8 after a byte order mark. */
	@Test
	void aJsonObjectInAnotherEncodingThanUtf8IsRefused() {
		String json = "{\"stream\":true,\"messages\":[]}";
		byte[][] bodies = { concat(new byte[] { (byte) 0xEF, (byte) 0xBB, (byte) 0xBF }, utf8(json)),
				json.getBytes(StandardCharsets.UTF_16BE), json.getBytes(StandardCharsets.UTF_16LE),
				json.getBytes(StandardCharsets.UTF_16), concat(new byte[] { (byte) 0xFF, (byte) 0xFE }, json.getBytes(StandardCharsets.UTF_16LE)),
				json.getBytes(java.nio.charset.Charset.forName("UTF-32BE")), json.getBytes(java.nio.charset.Charset.forName("UTF-32LE")),
				concat(new byte[] { 0, 0, (byte) 0xFE, (byte) 0xFF }, json.getBytes(java.nio.charset.Charset.forName("UTF-32BE"))),
				(" \n" + json).getBytes(StandardCharsets.UTF_16LE) };
		for (byte[] body : bodies) {
			LlmRequest request = LlmRequest.read(LlmApi.OPENAI, body);
			assertThat(request.refusal()).as(java.util.Arrays.toString(java.util.Arrays.copyOf(body, 6))).isNotNull();
			assertThat(request.refusal().detail()).contains("UTF-16 or UTF-32");
		}
		// zero bytes that are not JSON in any encoding (a binary upload) are estimated by their length
		assertThat(LlmRequest.read(LlmApi.OPENAI, new byte[4001]).refusal()).isNull();
		assertThat(LlmRequest.read(LlmApi.OPENAI, "[1]".getBytes(StandardCharsets.UTF_16LE)).refusal()).isNull();
	}

	private static byte[] concat(byte[] first, byte[] second) {
		byte[] out = java.util.Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, out, first.length, second.length);
		return out;
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

	/**
	 * The model a call names, read in the same pass as the estimate (issue 45: limits per model count by it), as
	 * JSON decodes it; none, or one that is not a string (the upstream refuses it), reads as null.
	 */
	@Test
	void readsTheModelAsJsonDecodesIt() {
		assertThat(read(LlmApi.OPENAI, CHAT_STREAM).model()).isEqualTo("gpt-4.1");
		assertThat(read(LlmApi.ANTHROPIC, "{\"model\":\"claude-sonnet-4-20250514\",\"max_tokens\":10,\"messages\":[]}")
			.model()).isEqualTo("claude-sonnet-4-20250514");
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"model\":\"gpt-4\\u006f\"}").model())
			.as("an escaped spelling is the model it decodes to").isEqualTo("gpt-4o");
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"m\\u006fdel\":\"a\\\"b\\\\c\\/d\\u00e9\\ud83d\\ude42\"}").model())
			.isEqualTo("a\"b\\c/d\u00e9\ud83d\ude42");
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"model\":\"modèle-世界\"}").model()).isEqualTo("modèle-世界");
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[]}").model()).isNull();
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"model\":null}").model()).isNull();
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"model\":[\"gpt-4o\"]}").model()).isNull();
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"tools\":[{\"model\":\"gpt-4o\"}]}").model())
			.as("a nested model is not the call's").isNull();
		assertThat(read(LlmApi.OPENAI, "\"gpt-4o\"").model()).isNull();
		LlmRequest twice = read(LlmApi.OPENAI, "{\"model\":\"o3\",\"messages\":[],\"mod\\u0065l\":\"gpt-4o\"}");
		assertThat(twice.refusal().field()).isEqualTo("model");
		assertThat(twice.model()).isNull();
		String longest = "m".repeat(LlmRequest.MAX_MODEL_BYTES);
		assertThat(read(LlmApi.OPENAI, "{\"messages\":[],\"model\":\"" + longest + "\"}").model()).isEqualTo(longest);
		LlmRequest tooLong = read(LlmApi.OPENAI, "{\"messages\":[],\"model\":\"" + longest + "m\"}");
		assertThat(tooLong.refusal().field()).isEqualTo("model");
		assertThat(tooLong.refusal().detail()).contains("longer than " + LlmRequest.MAX_MODEL_BYTES + " bytes");
	}

	private static LlmRequest read(LlmApi api, String body) {
		return LlmRequest.read(api, utf8(body));
	}

}
