package io.windowlimiter.metering;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;

import io.windowlimiter.metering.Usage.Outcome;
import org.junit.jupiter.api.Test;

import static io.windowlimiter.metering.LlmPayloads.ANTHROPIC_JSON;
import static io.windowlimiter.metering.LlmPayloads.ANTHROPIC_MESSAGE_START;
import static io.windowlimiter.metering.LlmPayloads.ANTHROPIC_SSE;
import static io.windowlimiter.metering.LlmPayloads.ANTHROPIC_SSE_HEAD;
import static io.windowlimiter.metering.LlmPayloads.CHAT_JSON;
import static io.windowlimiter.metering.LlmPayloads.CHAT_SSE;
import static io.windowlimiter.metering.LlmPayloads.CHAT_SSE_WITHOUT_USAGE;
import static io.windowlimiter.metering.LlmPayloads.CHAT_USAGE_CHUNK;
import static io.windowlimiter.metering.LlmPayloads.OPENAI_ERROR_JSON;
import static io.windowlimiter.metering.LlmPayloads.RESPONSES_JSON;
import static io.windowlimiter.metering.LlmPayloads.RESPONSES_SSE;
import static io.windowlimiter.metering.LlmPayloads.chatChunk;
import static io.windowlimiter.metering.LlmPayloads.utf8;
import static org.assertj.core.api.Assertions.assertThat;

class UsageMeterUnitTests {

	private static final Usage CHAT_JSON_USAGE = new Usage(Outcome.REPORTED, 19, 10, 0, 0, 29, 0);

	private static final Usage RESPONSES_JSON_USAGE = new Usage(Outcome.REPORTED, 328, 52, 0, 0, 380, 0);

	private static final Usage ANTHROPIC_JSON_USAGE = new Usage(Outcome.REPORTED, 2095, 503, 1500, 3000, 0, 0);

	@Test
	void readsTheUsageOfEveryJsonBody() {
		assertThat(meter(CHAT_JSON).usage()).isEqualTo(CHAT_JSON_USAGE);
		assertThat(meter(RESPONSES_JSON).usage()).isEqualTo(RESPONSES_JSON_USAGE);
		assertThat(meter(ANTHROPIC_JSON).usage()).isEqualTo(ANTHROPIC_JSON_USAGE);
		assertThat(ANTHROPIC_JSON_USAGE.tokens()).isEqualTo(2095 + 1500 + 3000 + 503);
		assertThat(CHAT_JSON_USAGE.tokens()).isEqualTo(29);
	}

	/** A stream's meter lives as long as the stream: it must not carry the JSON body's scanner it never uses. */
	@Test
	void onlyAJsonBodyMakesTheJsonBodyScanner() {
		for (String stream : new String[] { CHAT_SSE, RESPONSES_SSE, ANTHROPIC_SSE }) {
			UsageMeter meter = meter(stream);
			assertThat(meter.usage().outcome()).isEqualTo(Outcome.REPORTED);
			assertThat(meter.scansJsonBody()).isFalse();
		}
		assertThat(new UsageMeter(100, true).scansJsonBody()).isFalse();
		UsageMeter json = meter(CHAT_JSON);
		assertThat(json.scansJsonBody()).isTrue();
		assertThat(json.usage()).isEqualTo(CHAT_JSON_USAGE);
	}

	@Test
	void readsTheUsageOfEveryStream() {
		Usage chat = meter(CHAT_SSE).usage();
		assertThat(chat.outcome()).isEqualTo(Outcome.REPORTED);
		assertThat(chat.tokens()).isEqualTo(21);
		assertThat(chat.inputTokens()).isEqualTo(9);
		assertThat(chat.outputTokens()).isEqualTo(12);

		Usage responses = meter(RESPONSES_SSE).usage();
		assertThat(responses.outcome()).isEqualTo(Outcome.REPORTED);
		assertThat(responses.inputTokens()).isEqualTo(37);
		assertThat(responses.outputTokens()).isEqualTo(11);
		assertThat(responses.tokens()).isEqualTo(48);
		// the two deltas only, not the text's copies in the done events
		assertThat(responses.streamedTextBytes()).isEqualTo(utf8("Hi there! 你好").length);

		Usage anthropic = meter(ANTHROPIC_SSE).usage();
		assertThat(anthropic.outcome()).isEqualTo(Outcome.REPORTED);
		assertThat(anthropic.inputTokens()).isEqualTo(25);
		assertThat(anthropic.cacheReadInputTokens()).isEqualTo(100);
		assertThat(anthropic.outputTokens()).isEqualTo(15);
		assertThat(anthropic.tokens()).isEqualTo(140);
	}

	@Test
	void everySplitOfEveryBodyReadsTheSameUsage() {
		for (String body : new String[] { CHAT_JSON, RESPONSES_JSON, ANTHROPIC_JSON, CHAT_SSE, RESPONSES_SSE,
				ANTHROPIC_SSE, CHAT_SSE_WITHOUT_USAGE, crlf(CHAT_SSE), cr(ANTHROPIC_SSE), crlf(RESPONSES_SSE) }) {
			byte[] bytes = utf8(body);
			Usage whole = meter(body).usage();
			assertThat(whole.outcome()).isNotEqualTo(Outcome.NONE);
			for (int split = 0; split <= bytes.length; split++) {
				UsageMeter meter = new UsageMeter(100, false);
				meter.pass(ByteBuffer.wrap(bytes, 0, split).slice());
				meter.pass(ByteBuffer.wrap(bytes, split, bytes.length - split).slice());
				meter.finish();
				assertThat(meter.usage()).as("split at %d of %s", split, body).isEqualTo(whole);
			}
			UsageMeter byteByByte = new UsageMeter(100, false);
			ByteBuffer direct = ByteBuffer.allocateDirect(1);
			for (byte b : bytes) {
				direct.clear();
				direct.put(b).flip();
				assertThat(byteByByte.pass(direct)).isSameAs(direct);
			}
			assertThat(byteByByte.usage()).isEqualTo(whole);
		}
	}

	@Test
	void aStreamWithLinesEndedByCrOrCrlfReadsAsWithLf() {
		assertThat(meter(crlf(CHAT_SSE)).usage()).isEqualTo(meter(CHAT_SSE).usage());
		assertThat(meter(cr(ANTHROPIC_SSE)).usage()).isEqualTo(meter(ANTHROPIC_SSE).usage());
	}

	@Test
	void aChatStreamWithoutIncludeUsageHasOnlyItsText() {
		Usage usage = meter(CHAT_SSE_WITHOUT_USAGE).usage();
		assertThat(usage.outcome()).isEqualTo(Outcome.PARTIAL);
		assertThat(usage.tokens()).isZero();
		assertThat(usage.streamedTextBytes()).isEqualTo(utf8("Héllo 世界 🙂\\n\\\"ok\\\"").length);
	}

	@Test
	void aStreamCutBeforeItsUsageIsChargedTheLargerOfReservationAndObserved() {
		String cut = LlmPayloads.chatSseBody(true);
		UsageMeter meter = new UsageMeter(1000, false);
		meter.pass(utf8(cut));
		assertThat(meter.usage().outcome()).isEqualTo(Outcome.PARTIAL);
		assertThat(meter.charge(200)).isEqualTo(1000);

		StringBuilder longer = new StringBuilder();
		for (int i = 0; i < 2000; i++) {
			longer.append(chatChunk("word", true));
		}
		UsageMeter small = new UsageMeter(10, false);
		small.pass(utf8(longer.toString()));
		// 2000 deltas of 4 bytes: about 2000 tokens seen, more than the reservation
		assertThat(small.usage().observedTokens()).isEqualTo(2000);
		assertThat(small.charge(200)).isEqualTo(2000);
	}

	@Test
	void anAnthropicStreamCutAfterMessageStartKnowsItsInput() {
		UsageMeter meter = new UsageMeter(50, false);
		meter.pass(utf8(ANTHROPIC_SSE_HEAD));
		Usage usage = meter.usage();
		assertThat(usage.outcome()).isEqualTo(Outcome.PARTIAL);
		assertThat(usage.inputTokens()).isEqualTo(25);
		assertThat(usage.cacheReadInputTokens()).isEqualTo(100);
		assertThat(usage.outputTokens()).isEqualTo(1);
		// 125 input + max(1 reported, 17 bytes of text / 4 = 5)
		assertThat(usage.observedTokens()).isEqualTo(125 + 5);
		assertThat(meter.charge(200)).isEqualTo(130);
		assertThat(new UsageMeter(500, false).charge(200)).isEqualTo(500);
	}

	@Test
	void anEventCutByTheEndOfTheStreamAddsNothing() {
		String withoutBlankLine = ANTHROPIC_MESSAGE_START.substring(0, ANTHROPIC_MESSAGE_START.length() - 1);
		UsageMeter meter = new UsageMeter(50, false);
		meter.pass(utf8(withoutBlankLine));
		meter.finish();
		assertThat(meter.usage()).isEqualTo(Usage.NONE);
		UsageMeter half = meter(CHAT_USAGE_CHUNK.substring(0, CHAT_USAGE_CHUNK.indexOf("\"total_tokens\"")));
		assertThat(half.usage()).isEqualTo(Usage.NONE);
	}

	@Test
	void anUpstreamErrorBeforeAnyTokenIsRefundedAndABodyWithoutUsageChargedTheReservation() {
		UsageMeter error = new UsageMeter(700, false);
		error.pass(utf8(OPENAI_ERROR_JSON));
		error.finish();
		assertThat(error.usage().outcome()).isEqualTo(Outcome.ERROR);
		assertThat(error.usage().tokens()).isZero();
		assertThat(error.charge(429)).isZero();
		assertThat(error.charge(503)).isZero();
		assertThat(error.charge(200)).isZero();
		assertThat(new UsageMeter(700, false).charge(502)).isZero();
		assertThat(new UsageMeter(700, false).charge(200)).isEqualTo(700);
		UsageMeter html = meter("<html><body>Bad gateway</body></html>");
		assertThat(html.usage()).isEqualTo(Usage.NONE);
		assertThat(html.charge(200)).isEqualTo(100);
		assertThat(html.charge(502)).isZero();
	}

	@Test
	void anErrorEventBeforeAnyTokenIsRefundedAndOneAfterTextIsNot() {
		String overloaded = LlmPayloads.anthropicEvent("error",
				"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}");
		UsageMeter first = meter(overloaded);
		assertThat(first.usage().outcome()).isEqualTo(Outcome.ERROR);
		assertThat(first.charge(200)).isZero();
		UsageMeter later = meter(ANTHROPIC_SSE_HEAD + overloaded);
		assertThat(later.usage().outcome()).isEqualTo(Outcome.PARTIAL);
		assertThat(later.charge(200)).isEqualTo(130);
		// the Responses API's body carries "error": null
		assertThat(meter(RESPONSES_JSON).usage().outcome()).isEqualTo(Outcome.REPORTED);
		assertThat(meter("{\"error\":null,\"id\":\"x\"}").usage()).isEqualTo(Usage.NONE);
	}

	@Test
	void aReportedUsageIsChargedExactlyWhateverTheReservationOrStatus() {
		UsageMeter meter = new UsageMeter(5000, false);
		meter.pass(utf8(CHAT_JSON));
		assertThat(meter.charge(200)).isEqualTo(29);
		assertThat(meter.charge(500)).isEqualTo(29);
	}

	@Test
	void malformedInputNeverThrowsAndLaterEventsStillCount() {
		String body = "data: {\"choices\":[], \"usage\": {\"prompt_tokens\": 7, \"completion_tokens\":\n\n"
				+ "data: {not json at all}}}}]]]\n\n" + "data: \"unterminated\n\n"
				+ "data: {\"usage\":{\"prompt_tokens\":-3,\"completion_tokens\":2.5,\"total_tokens\":1e3}}\n\n"
				+ "data: {\"usage\":{\"prompt_tokens\":99999999999999999999999,\"completion_tokens\":\"12\"}}\n\n"
				+ "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n"
				+ "\u0000\u00ff\u0001garbage without newline end\n\n"
				+ ": a comment line\nretry: 100\nid: 7\nfoo\n\n" + CHAT_USAGE_CHUNK;
		byte[] bytes = utf8(body);
		Usage whole = meter(body).usage();
		assertThat(whole.outcome()).isEqualTo(Outcome.REPORTED);
		assertThat(whole.tokens()).isEqualTo(21);
		for (int split = 0; split <= bytes.length; split++) {
			UsageMeter meter = new UsageMeter(1, true);
			meter.pass(ByteBuffer.wrap(bytes, 0, split).slice());
			meter.pass(ByteBuffer.wrap(bytes, split, bytes.length - split).slice());
			assertThat(meter.usage()).isEqualTo(whole);
		}
		byte[] noise = new byte[100_000];
		new java.util.Random(42).nextBytes(noise);
		UsageMeter random = new UsageMeter(3, true);
		random.pass(noise);
		random.finish();
		assertThat(random.charge(200)).isEqualTo(3);
		assertThat(random.retainedBytes()).isLessThanOrEqualTo(UsageMeter.MAX_RETAINED_BYTES);
	}

	@Test
	void anIncompleteOrFailedResponseStillReportsItsUsage() {
		String incomplete = LlmPayloads.responsesEvent("response.incomplete", "{\"type\":\"response.incomplete\","
				+ "\"sequence_number\":9,\"response\":{\"id\":\"resp_1\",\"status\":\"incomplete\","
				+ "\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"usage\":{\"input_tokens\":20,"
				+ "\"output_tokens\":64,\"output_tokens_details\":{\"reasoning_tokens\":64},\"total_tokens\":84}}}");
		assertThat(meter(incomplete).usage()).isEqualTo(new Usage(Outcome.REPORTED, 20, 64, 0, 0, 84, 0));
		String failed = LlmPayloads.responsesEvent("response.failed", "{\"type\":\"response.failed\","
				+ "\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\"},\"usage\":null}}");
		assertThat(meter(failed).usage()).isEqualTo(Usage.NONE);
	}

	@Test
	void anAnthropicMessageDeltaWithEveryFigureKeepsTheLargest() {
		// newer message_delta events repeat the input figures next to the cumulative output
		String body = ANTHROPIC_MESSAGE_START + LlmPayloads.anthropicEvent("message_delta",
				"{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},"
						+ "\"usage\":{\"input_tokens\":25,\"cache_creation_input_tokens\":0,"
						+ "\"cache_read_input_tokens\":100,\"output_tokens\":89,\"server_tool_use\":"
						+ "{\"web_search_requests\":1}}}");
		assertThat(meter(body).usage()).isEqualTo(new Usage(Outcome.REPORTED, 25, 89, 0, 100, 0, 0));
	}

	@Test
	void anEventWithSeveralDataLinesIsOneJsonDocument() {
		String body = "event: message_delta\ndata: {\"type\":\"message_delta\",\ndata: \"usage\":\n"
				+ "data:{\"output_tokens\":15}}\n\n";
		Usage usage = meter(body).usage();
		assertThat(usage.outcome()).isEqualTo(Outcome.REPORTED);
		assertThat(usage.outputTokens()).isEqualTo(15);
	}

	@Test
	void deepAndDecoyUsageIsNotTaken() {
		String body = "{\"choices\":[{\"message\":{\"content\":\"x\",\"usage\":{\"prompt_tokens\":500}}}],"
				+ "\"metadata\":{\"usage\":{\"completion_tokens\":600}},\"usage_note\":{\"prompt_tokens\":1},"
				+ "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"prompt_tokens_details\":{\"cached_tokens\":2},"
				+ "\"extra\":{\"prompt_tokens_details\":{\"cached_tokens\":9}}}}";
		// the usage's own cached tokens (priced apart in money), not a decoy one level deeper
		assertThat(meter(body).usage()).isEqualTo(new Usage(Outcome.REPORTED, 3, 4, 0, 0, 0, 0, 2));
	}

	@Test
	void withoutStrippingEverySliceIsPassedOnAsItCame() {
		byte[] bytes = utf8(CHAT_SSE);
		for (int split = 0; split <= bytes.length; split += 7) {
			UsageMeter meter = new UsageMeter(1, false);
			ByteBuffer first = ByteBuffer.wrap(bytes, 0, split).slice();
			ByteBuffer second = ByteBuffer.wrap(bytes, split, bytes.length - split).slice();
			assertThat(meter.pass(first)).isSameAs(first);
			assertThat(meter.pass(second)).isSameAs(second);
			assertThat(first.position()).isZero();
			assertThat(meter.finish().hasRemaining()).isFalse();
		}
	}

	@Test
	void strippingDropsTheUsageOnlyChunkAtEverySplit() {
		String expected = LlmPayloads.chatSseBody(true) + "data: [DONE]\n\n";
		String[][] cases = { { CHAT_SSE, expected }, { crlf(CHAT_SSE), crlf(expected) },
				{ cr(CHAT_SSE), cr(expected) } };
		for (String[] pair : cases) {
			String wanted = pair[1];
			byte[] bytes = utf8(pair[0]);
			for (int split = 0; split <= bytes.length; split++) {
				for (int second = split; second <= bytes.length; second += Math.max(1, bytes.length / 4)) {
					UsageMeter meter = new UsageMeter(1, true);
					ByteArrayOutputStream sent = new ByteArrayOutputStream();
					send(sent, meter.pass(ByteBuffer.wrap(bytes, 0, split).slice()));
					send(sent, meter.pass(ByteBuffer.wrap(bytes, split, second - split).slice()));
					send(sent, meter.pass(ByteBuffer.wrap(bytes, second, bytes.length - second).slice()));
					send(sent, meter.finish());
					assertThat(sent.toString(StandardCharsets.UTF_8)).as("split at %d, %d", split, second)
						.isEqualTo(wanted);
					assertThat(meter.usage().tokens()).isEqualTo(21);
				}
			}
		}
	}

	@Test
	void strippingLeavesOtherStreamsByteForByte() {
		for (String body : new String[] { ANTHROPIC_SSE, RESPONSES_SSE, CHAT_SSE_WITHOUT_USAGE, CHAT_JSON,
				"data: {\"choices\":[{}],\"usage\":{\"prompt_tokens\":1}}\n\n",
				"data: {\"choices\":[],\"usage\":null}\n\n", "data: half an event without its end",
				// Azure OpenAI's first chunk: empty choices, content filter results, no usage
				"data: {\"choices\":[],\"created\":0,\"id\":\"\",\"model\":\"\",\"object\":\"\","
						+ "\"prompt_filter_results\":[{\"prompt_index\":0,\"content_filter_results\":{\"hate\":"
						+ "{\"filtered\":false,\"severity\":\"safe\"}}}]}\n\n" + chatChunk("x", true) }) {
			byte[] bytes = utf8(body);
			for (int split = 0; split <= bytes.length; split++) {
				UsageMeter meter = new UsageMeter(1, true);
				ByteArrayOutputStream sent = new ByteArrayOutputStream();
				send(sent, meter.pass(ByteBuffer.wrap(bytes, 0, split).slice()));
				send(sent, meter.pass(ByteBuffer.wrap(bytes, split, bytes.length - split).slice()));
				send(sent, meter.finish());
				assertThat(sent.toByteArray()).as("split at %d of %s", split, body).isEqualTo(bytes);
			}
		}
	}

	@Test
	void strippingReadsDirectBuffersAsNettyHandsThem() {
		byte[] bytes = utf8(CHAT_SSE);
		String expected = LlmPayloads.chatSseBody(true) + "data: [DONE]\n\n";
		for (int size : new int[] { 1, 7, 64, 1000, bytes.length }) {
			UsageMeter meter = new UsageMeter(1, true);
			ByteArrayOutputStream sent = new ByteArrayOutputStream();
			for (int at = 0; at < bytes.length; at += size) {
				int length = Math.min(size, bytes.length - at);
				ByteBuffer direct = ByteBuffer.allocateDirect(length);
				direct.put(bytes, at, length).flip();
				send(sent, meter.pass(direct));
				assertThat(direct.remaining()).isEqualTo(length);
			}
			send(sent, meter.finish());
			assertThat(sent.toString(StandardCharsets.UTF_8)).as("slices of %d", size).isEqualTo(expected);
			assertThat(meter.usage().tokens()).isEqualTo(21);
		}
	}

	@Test
	void strippingHoldsBackOnlyAnUnfinishedEvent() {
		UsageMeter meter = new UsageMeter(1, true);
		String chunk = chatChunk("a", true);
		String finish = finishChunk(chunk);
		ByteBuffer whole = ByteBuffer.wrap(utf8(chunk + finish));
		assertThat(meter.pass(whole)).isSameAs(whole);
		ByteBuffer sent = meter.pass(utf8(chunk.substring(0, 20)));
		assertThat(sent.remaining()).isZero();
		assertThat(meter.heldBytes()).isEqualTo(20);
		sent = meter.pass(utf8(chunk.substring(20) + finish + "data: [DO"));
		assertThat(StandardCharsets.UTF_8.decode(sent).toString()).isEqualTo(chunk + finish);
		assertThat(meter.heldBytes()).isEqualTo(9);
	}

	/**
	 * An unfinished event after a chunk whose choice did not finish is passed on as it comes, however it is cut:
	 * OpenAI sends the usage-only chunk once every choice has finished. After a finishing chunk, and after one
	 * whose text spells an unfinished choice, it is held.
	 */
	@Test
	void strippingPassesOnAnEventAfterAnOpenChoiceAsItComes() {
		String obfuscated = chatChunk("a", true).replace("}\n\n", ",\"obfuscation\":\"Xq3\"}\n\n");
		for (String line : new String[] { "\n", "\r\n" }) {
			for (String open : new String[] { chatChunk("a", true), chatChunk("bc", false), obfuscated }) {
				String chunk = open.replace("\n", line);
				String finish = finishChunk(chunk);
				String spelt = finishChunk(chatChunk("\\\"finish_reason\\\":null", true)).replace("\n", line);
				String usage = CHAT_USAGE_CHUNK.replace("\n", line);
				int choices = chunk.indexOf("\"choices\":[{") + "\"choices\":[{".length();
				for (int cut = 1; cut < chunk.length(); cut++) {
					// held after a finish unless cut past its first choice (strippingPassesOnAChunkWithChoicesAsItComes)
					int held = (cut < choices) ? cut : 0;
					UsageMeter meter = new UsageMeter(1, true);
					ByteArrayOutputStream sent = new ByteArrayOutputStream();
					// twice: the second is read by the cheap path from the prefix and end the first taught it
					send(sent, meter.pass(utf8(chunk + chunk)));
					send(sent, meter.pass(utf8(chunk.substring(0, cut))));
					assertThat(meter.heldBytes()).as("cut at %d of %s", cut, chunk).isZero();
					send(sent, meter.pass(utf8(chunk.substring(cut) + finish + chunk.substring(0, cut))));
					assertThat(meter.heldBytes()).as("after a finish, cut at %d", cut).isEqualTo(held);
					send(sent, meter.pass(utf8(chunk.substring(cut) + spelt + chunk.substring(0, cut))));
					assertThat(meter.heldBytes()).as("after text spelling an open choice, cut at %d", cut)
						.isEqualTo(held);
					int usageCut = Math.min(cut, usage.length() - 1);
					send(sent, meter.pass(utf8(chunk.substring(cut) + finish + usage.substring(0, usageCut))));
					send(sent, meter.pass(utf8(usage.substring(usageCut) + "data: [DONE]" + line + line)));
					send(sent, meter.finish());
					assertThat(sent.toString(StandardCharsets.UTF_8))
						.isEqualTo(chunk.repeat(3) + finish + chunk + spelt + chunk + finish + "data: [DONE]" + line + line);
					assertThat(meter.usage().tokens()).isEqualTo(21);
				}
			}
		}
	}

	/**
	 * After a finishing chunk (a choice of several may still go on), an unfinished chunk whose first bytes are
	 * those of the chunks before it up to its first choice (the usage chunk's choices are empty) is passed on as
	 * it comes; one cut before that point is held, and the usage chunk, however it is cut, is dropped whole.
	 */
	@Test
	void strippingPassesOnAChunkWithChoicesAsItComes() {
		String chunk = chatChunk("a", true);
		int choices = chunk.indexOf("\"choices\":[{") + "\"choices\":[{".length();
		for (String line : new String[] { "\n", "\r\n" }) {
			String one = chunk.replace("\n", line);
			String finish = finishChunk(one);
			String usage = CHAT_USAGE_CHUNK.replace("\n", line);
			UsageMeter meter = new UsageMeter(1, true);
			ByteArrayOutputStream sent = new ByteArrayOutputStream();
			send(sent, meter.pass(utf8(one + finish)));
			// cut at its first choice: passed on
			send(sent, meter.pass(utf8(one.substring(0, choices))));
			assertThat(meter.heldBytes()).isZero();
			assertThat(sent.size()).isEqualTo(utf8(one + finish).length + choices);
			// cut before it: held, then passed whole with the rest
			send(sent, meter.pass(utf8(one.substring(choices) + finish + one.substring(0, choices - 1))));
			assertThat(meter.heldBytes()).isEqualTo(choices - 1);
			send(sent, meter.pass(utf8(one.substring(choices - 1) + finish)));
			assertThat(meter.heldBytes()).isZero();
			// the usage chunk cut after its (empty) choices: held, then dropped
			int empty = usage.indexOf("[]") + 1;
			send(sent, meter.pass(utf8(usage.substring(0, empty))));
			assertThat(meter.heldBytes()).isEqualTo(empty);
			send(sent, meter.pass(utf8(usage.substring(empty) + "data: [DONE]" + line + line)));
			send(sent, meter.finish());
			assertThat(sent.toString(StandardCharsets.UTF_8))
				.isEqualTo((one + finish).repeat(3) + "data: [DONE]" + line + line);
			assertThat(meter.usage().tokens()).isEqualTo(21);
		}
	}

	/** {@code chunk}, a chat completions chunk of one choice, as the chunk that finishes its choice. */
	private static String finishChunk(String chunk) {
		String finished = chunk.replace("\"finish_reason\":null", "\"finish_reason\":\"stop\"");
		assertThat(finished).isNotEqualTo(chunk);
		return finished;
	}

	@Test
	void strippingPassesOnAnOverLongEventAsItComes() {
		StringBuilder huge = new StringBuilder("data: {\"choices\":[{\"delta\":{\"content\":\"");
		while (huge.length() < 3 * UsageMeter.MAX_HELD_EVENT_BYTES) {
			huge.append("0123456789abcdef");
		}
		huge.append("\"}}]}\n\n");
		String body = huge + CHAT_USAGE_CHUNK + "data: [DONE]\n\n";
		byte[] bytes = utf8(body);
		UsageMeter meter = new UsageMeter(1, true);
		ByteArrayOutputStream sent = new ByteArrayOutputStream();
		for (int at = 0; at < bytes.length; at += 1000) {
			send(sent, meter.pass(ByteBuffer.wrap(bytes, at, Math.min(1000, bytes.length - at)).slice()));
			assertThat(meter.heldBytes()).isLessThanOrEqualTo(UsageMeter.MAX_HELD_EVENT_BYTES);
			assertThat(meter.retainedBytes()).isLessThanOrEqualTo(UsageMeter.MAX_RETAINED_BYTES);
		}
		send(sent, meter.finish());
		assertThat(sent.toString(StandardCharsets.UTF_8)).isEqualTo(huge + "data: [DONE]\n\n");
		assertThat(meter.usage().tokens()).isEqualTo(21);
	}

	@Test
	void aFiftyMegabyteStreamKeepsItsMemoryFlat() {
		// stripping is the mode that holds bytes back: 50 MB of it; reading alone keeps only a cut event, 5 MB show it
		for (boolean strip : new boolean[] { false, true }) {
			long length = (strip ? 50L : 5L) * 1024 * 1024;
			String chunk = chatChunk("lorem ipsum", true);
			byte[] slice = utf8(chunk.repeat(8192 / chunk.length() + 1));
			UsageMeter meter = new UsageMeter(100, strip);
			long fed = 0;
			int maxRetained = 0;
			while (fed < length) {
				ByteBuffer sent = meter.pass(ByteBuffer.wrap(slice, 0, slice.length - 13).slice());
				fed += sent.remaining();
				sent = meter.pass(ByteBuffer.wrap(slice, slice.length - 13, 13).slice());
				fed += sent.remaining();
				maxRetained = Math.max(maxRetained, meter.retainedBytes());
			}
			meter.pass(utf8(CHAT_USAGE_CHUNK + "data: [DONE]\n\n"));
			Usage usage = meter.usage();
			assertThat(usage.outcome()).isEqualTo(Outcome.REPORTED);
			assertThat(usage.tokens()).isEqualTo(21);
			assertThat(usage.streamedTextBytes()).isGreaterThan(length / 25);
			// an event cut by the slice (~250 bytes here) is carried to the next slice in a buffer that stops at
			// 512 bytes, beside the prefix the chunks share (~100); strip mode also holds the cut event back
			// from the client, in one that stops at 1 KB
			assertThat(maxRetained).as("strip=%s", strip).isLessThanOrEqualTo(strip ? 2048 : 1024);
		}
	}

	@Test
	void aLongSingleLineIsReadWithoutKeepingIt() {
		// one JSON body of 20 MB: a huge content string, usage after it
		StringBuilder content = new StringBuilder();
		content.append("0123456789".repeat(100_000));
		String prefix = "{\"choices\":[{\"message\":{\"content\":\"";
		String suffix = "\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6,\"total_tokens\":11}}";
		UsageMeter meter = new UsageMeter(1, false);
		meter.pass(utf8(prefix));
		byte[] piece = utf8(content.toString());
		for (int i = 0; i < 20; i++) {
			meter.pass(piece);
		}
		meter.pass(utf8(suffix));
		assertThat(meter.usage().tokens()).isEqualTo(11);
		assertThat(meter.retainedBytes()).isZero();
	}

	@Test
	void theRequestDecidesTheReservationAndTheStripping() {
		LlmRequest request = LlmRequest.read(LlmApi.OPENAI,
				utf8("{\"model\":\"gpt-4o\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
		TokenEstimate estimate = TokenEstimate.of(request, 100, 50, 10_000);
		UsageMeter meter = UsageMeter.of(request, estimate);
		assertThat(meter.stripsUsageChunk()).isTrue();
		assertThat(meter.reservedTokens()).isEqualTo(estimate.tokens()).isEqualTo(1 + 50);
		assertThat(meter.charge(200)).isEqualTo(51);
	}

	@Test
	void textThatSpellsUsageOrErrorIsNeitherAndIsCountedAsText() {
		// a model writing the markers, quoted as JSON quotes them: the cheap path and the full scan agree
		String text = "the \\\"usage\\\":{\\\"prompt_tokens\\\":500,\\\"completion_tokens\\\":900} and "
				+ "\\\"error\\\":{\\\"type\\\":\\\"x\\\"}, usage, error, \\\"delta\\\":\\\"no\\\" ";
		String chunk = chatChunk(text, false);
		Usage cut = sameOnBothPaths(chunk + chunk + "data: [DONE]\n\n");
		assertThat(cut).isEqualTo(new Usage(Outcome.PARTIAL, 0, 0, 0, 0, 0, 2L * utf8(text).length));
		Usage reported = sameOnBothPaths(chatChunk(text, true) + CHAT_USAGE_CHUNK + "data: [DONE]\n\n");
		assertThat(reported.outcome()).isEqualTo(Outcome.REPORTED);
		assertThat(reported.tokens()).isEqualTo(21);
		assertThat(reported.streamedTextBytes()).isEqualTo(utf8(text).length);
	}

	@Test
	void usageAndErrorAreFoundWhateverTheirSpacing() {
		Usage usage = sameOnBothPaths(chatChunk("ab", true)
				+ "data: {\"choices\":[] , \"usage\" :\t{\"prompt_tokens\" : 3, \"completion_tokens\":4}}\n\n"
				+ "data: [DONE]\n\n");
		assertThat(usage).isEqualTo(new Usage(Outcome.REPORTED, 3, 4, 0, 0, 0, 2));
		Usage nulls = sameOnBothPaths("data: {\"usage\" : null, \"error\":null,\"delta\":\"abc\"}\n\n");
		assertThat(nulls).isEqualTo(new Usage(Outcome.PARTIAL, 0, 0, 0, 0, 0, 3));
		Usage error = sameOnBothPaths("data: {\"type\":\"error\", \"error\" : {\"type\":\"overloaded_error\"}}\n\n");
		assertThat(error.outcome()).isEqualTo(Outcome.ERROR);
		// "usage" followed by anything but null goes to the full scan: here a value, not a key
		assertThat(sameOnBothPaths("data: {\"kind\":\"usage\",\"delta\":\"ab\"}\n\n").streamedTextBytes())
			.isEqualTo(2);
	}

	@Test
	void theDeltaTextIsCountedAsTheFullScanCountsIt() {
		String[][] cases = {
				// Responses API: the delta is a string, escapes counted as sent
				{ "{\"type\":\"response.output_text.delta\",\"delta\":\"a\\\"b\\\\\",\"sequence_number\":4}", "6" },
				// Anthropic: text under delta; the type is not text
				{ "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi 世\"}}",
						"6" },
				// chat: a tool call's arguments, in an array in the delta; two choices
				{ "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\","
						+ "\"arguments\":\"{\\\"q\\\":1}\"}}]}},{\"delta\" : {\"content\":\"xy\",\"refusal\":null}}]}",
						"11" },
				// a delta in a delta counts once; a string element of an array does not count
				{ "{\"delta\":{\"delta\":\"ab\",\"content\":[\"no\",{\"text\":\"cd\"}],\"x\":\"no\"}}", "4" },
				// a key ending in an escaped quote and delta is not delta
				{ "{\"x\\\"delta\":\"abc\",\"text\":\"no\"}", "0" },
				// "delta" as a value, and a text key outside any delta
				{ "{\"type\":\"delta\",\"content\":\"no\",\"delta\":\"ab\"}", "2" },
				// malformed in the delta: the full scan decides (nothing)
				{ "{\"delta\":{\"content\":\"ab\"]}", "0" },
				// not an object
				{ "\"delta\"", "0" } };
		for (String[] c : cases) {
			for (String end : new String[] { "\n\n", "\r\n\r\n", "\r\r", "  \n\n" }) {
				String body = "event: x\n: comment\ndata: " + c[0] + end;
				assertThat(sameOnBothPaths(body).streamedTextBytes()).as("%s", body).isEqualTo(Long.parseLong(c[1]));
			}
		}
	}

	@Test
	void oddEventsReadAsTheFullScanReadsThem() {
		String[] bodies = { "data:[DONE]\n\n", "data: [DONE]\r\n\r\n", "data: [DONE] \n\n", "data\n\n",
				"data:\n\n", "data: {\"delta\":\"ab\"}\ndata: {\"delta\":\"cd\"}\n\n",
				"data: {\"delta\":\n\"ab\"}\n\n", "datax: {\"delta\":\"ab\"}\n\n",
				"data: {\"delta\":\"ab\"}\n\ndata: {\"delta\":\"cd\"}", "id: 1\nretry: 5\n\n",
				"data: {\"delta\":\"ab\"}\r\n\r\n" + CHAT_USAGE_CHUNK.replace("\n", "\r\n") };
		for (String body : bodies) {
			sameOnBothPaths(body);
		}
		assertThat(sameOnBothPaths("data: {\"delta\":\"ab\"}\ndata: {\"delta\":\"cd\"}\n\n").streamedTextBytes())
			.isZero();
		assertThat(sameOnBothPaths("data: {\"delta\":\"ab\"}\n\ndata: {\"delta\":\"cd\"}").streamedTextBytes())
			.isEqualTo(2);
	}

	@Test
	void strippingKeepsAChunkWhoseTextSpellsTheUsageChunk() {
		String text = "\\\"choices\\\":[],\\\"usage\\\":{\\\"prompt_tokens\\\":1}";
		String body = chatChunk(text, true) + CHAT_USAGE_CHUNK + "data: [DONE]\n\n";
		UsageMeter meter = new UsageMeter(1, true);
		ByteArrayOutputStream sent = new ByteArrayOutputStream();
		send(sent, meter.pass(utf8(body)));
		send(sent, meter.finish());
		assertThat(sent.toString(StandardCharsets.UTF_8)).isEqualTo(chatChunk(text, true) + "data: [DONE]\n\n");
		assertThat(meter.usage().tokens()).isEqualTo(21);
	}

	@Test
	void aLongStreamInSlicesOfEveryDirectSizeReadsTheSame() {
		StringBuilder body = new StringBuilder(LlmPayloads.chatSseBody(true));
		for (int i = 0; i < 300; i++) {
			body.append(chatChunk("w" + i + " \\\"usage\\\":{} 世界", true));
		}
		body.append("data: {\"delta\":\"").append("0123456789".repeat(3000)).append("\"}\n\n");
		body.append(CHAT_USAGE_CHUNK).append("data: [DONE]\n\n");
		byte[] bytes = utf8(body.toString());
		Usage whole = meter(body.toString()).usage();
		assertThat(whole.outcome()).isEqualTo(Outcome.REPORTED);
		for (int size : new int[] { 1, 3, 97, 1000, 4096, 8192, 40_000 }) {
			for (boolean strip : new boolean[] { false, true }) {
				UsageMeter meter = new UsageMeter(1, strip);
				for (int at = 0; at < bytes.length; at += size) {
					int length = Math.min(size, bytes.length - at);
					meter.pass(ByteBuffer.allocateDirect(length).put(bytes, at, length).flip());
				}
				meter.finish();
				assertThat(meter.usage()).as("slices of %d, strip %s", size, strip).isEqualTo(whole);
			}
		}
	}

	@Test
	void everySlicingOfEveryStreamReadsAndStripsAsTheFullScan() {
		StringBuilder longStream = new StringBuilder(LlmPayloads.chatSseBody(true));
		for (int i = 0; i < 40; i++) {
			longStream.append(chatChunk("w" + i + " \\\"usage\\\":{} 世界", true));
		}
		// longer than the carried copy: the full scan takes it over mid-event
		longStream.append("data: {\"choices\":[{\"delta\":{\"content\":\"").append("0123456789".repeat(500))
			.append("\"}}]}\n\n");
		longStream.append(CHAT_USAGE_CHUNK).append("data: [DONE]\n\n");
		String[] bodies = { CHAT_SSE, crlf(CHAT_SSE), cr(CHAT_SSE), ANTHROPIC_SSE, cr(ANTHROPIC_SSE),
				crlf(RESPONSES_SSE), CHAT_SSE_WITHOUT_USAGE, longStream.toString(), crlf(longStream.toString()),
				"data: {\"delta\":\"ab\"}\ndata: {\"delta\":\"cd\"}\n\n" + CHAT_SSE,
				"data: {\"delta\":\"ab\"}\n\ndata: {\"delta\":\"cd\"}" };
		Random random = new Random(7);
		for (String body : bodies) {
			byte[] bytes = utf8(body);
			for (boolean strip : new boolean[] { false, true }) {
				UsageMeter reference = UsageMeter.fullScanOnly(1, strip);
				ByteArrayOutputStream expected = new ByteArrayOutputStream();
				send(expected, reference.pass(bytes));
				send(expected, reference.finish());
				for (int round = 0; round < 200; round++) {
					int largest = 1 + random.nextInt(round < 100 ? 40 : 600);
					UsageMeter meter = new UsageMeter(1, strip);
					ByteArrayOutputStream sent = new ByteArrayOutputStream();
					for (int at = 0; at < bytes.length;) {
						int length = Math.min(1 + random.nextInt(largest), bytes.length - at);
						ByteBuffer slice = (round % 2 == 0) ? ByteBuffer.wrap(bytes, at, length).slice()
								: ByteBuffer.allocateDirect(length).put(bytes, at, length).flip();
						send(sent, meter.pass(slice));
						at += length;
					}
					send(sent, meter.finish());
					assertThat(meter.usage()).as("round %d, strip %s: %s", round, strip, body)
						.isEqualTo(reference.usage());
					assertThat(sent.toByteArray()).as("round %d, strip %s: %s", round, strip, body)
						.isEqualTo(expected.toByteArray());
				}
			}
		}
	}

	@Test
	void anEventAfterOneWithTheSamePrefixReadsAsItReadsAlone() {
		// the first event teaches the cheap path its prefix (up to the delta's value); each second one starts
		// with it and must add exactly what it adds read alone, whatever follows the prefix
		String prefix = "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":";
		String taught = prefix + "{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n";
		String[] rests = { "{\"content\":\"ab\"},\"finish_reason\":null}]}\n\n",
				"{\"content\":\"ab\"},\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":3,"
						+ "\"completion_tokens\":4,\"total_tokens\":7}}\n\n",
				"{\"content\":\"ab\"},\"usage\":null}]}\n\n", "{\"content\":\"a\nb\"},\"x\":1}]}\n\n",
				"{\"content\":\"ab\"]}\n\n", "{\"content\":\"ab\"}}]}\nid: 5\n\n",
				"{\"content\":\"ab\"}}]}\ndata: {\"delta\":\"cd\"}\n\n", "{\"content\":\"ab\"},\"x\":{\"delta\":\"cd\"}}]}\n\n",
				"{\"usage\":{\"prompt_tokens\":1}}}]}\n\n", "{\"content\":\"ab\"},\"error\":{\"message\":\"x\"}}]}\n\n",
				"{\"content\":\"ab\"},\"finish_reason\":null}]\n\n", "{\"content\":\"ab\"}}]}\r\n\r\n",
				"{\"content\":\"ab\"}}]}\r\r", "{\"content\":\"ab\"}}]}\n\r\n", "\"ab\"}]}\n\n", "{\"content\":\"ab",
				"{\"content\":\"ab\"}}]}\n", "{\"content\":\"ab\\\"\"}}]}\n\n", "7}]}\n\n", "{}}]}\n\n" };
		for (String rest : rests) {
			assertReadsAsAloneAfter(taught, 2, prefix + rest);
		}
	}

	@Test
	void anEventAfterOneWithTheSamePrefixAndEndReadsAsItReadsAlone() {
		// two events teach the cheap path the prefix (up to the delta's value) and the end (after it, to the
		// blank line) their stream's events share; each third one starts with the prefix and must add exactly
		// what it adds read alone, whether it ends with the same bytes or not, and whatever its delta holds
		String prefix = "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":";
		String end = ",\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n";
		String taught = prefix + "{\"content\":\"hi\"}" + end + prefix + "{\"content\":\"yo\"}" + end;
		String[] rests = { "{\"content\":\"ab\"}" + end, "\"ab\"" + end, "7" + end, "{}" + end,
				"{\"content\":\"a\\\"b\",\"refusal\":\"cd\"}" + end,
				// the value runs over the data line: only the full scan may read it
				"{\"content\":\"a\nb\"}" + end, "{\"content\":\"ab" + end,
				// usage or error in the delta, or where the end had null
				"{\"usage\":{\"prompt_tokens\":1}}" + end, "{\"error\":\"x\"}" + end,
				"{\"content\":\"ab\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":3,"
						+ "\"completion_tokens\":4,\"total_tokens\":7}}\n\n",
				// another end: other lines, line ends, a second delta, cut before its blank line
				"{\"content\":\"ab\"},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null}\n\n",
				"{\"content\":\"ab\"}" + end.replace("\n", "\r\n"), "{\"content\":\"ab\"}" + end.replace("\n\n", "\nid: 4\n\n"),
				"{\"content\":\"ab\"},\"x\":{\"delta\":\"cd\"}" + end, "{\"content\":\"ab\"}" + end.substring(0, end.length() - 1),
				"{\"content\":\"ab\"}" + end + prefix + "{\"content\":\"cd\"}" + end };
		for (String rest : rests) {
			assertReadsAsAloneAfter(taught, 4, prefix + rest);
		}
		// an end taught by an event with two deltas would skip the second's text: it is not learnt
		String twoDeltas = prefix + "{\"content\":\"hi\"},\"x\":{\"delta\":\"zz\"}" + end;
		assertThat(meter(twoDeltas + twoDeltas + twoDeltas).usage().streamedTextBytes()).isEqualTo(12);
	}

	@Test
	void anEventAfterOnesWithTheSameTextStringReadsAsItReadsAlone() {
		// events whose delta holds one text string teach the cheap path to read the next from that string alone
		// (the delta's bytes before it join the prefix): Anthropic's text and tool input deltas, each third event
		// another shape, another key before the string or none, or more text after it
		String prefix = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":";
		String end = "}\n\n";
		String taught = prefix + "{\"type\":\"text_delta\",\"text\":\"hi\"}" + end + prefix
				+ "{\"type\":\"text_delta\",\"text\":\"yo\"}" + end;
		String[] rests = { "{\"type\":\"text_delta\",\"text\":\"a\\\"b\\\\\"}" + end,
				"{\"type\":\"text_delta\",\"text\":\"\"}" + end, "{\"type\":\"text_delta\",\"text\":7}" + end,
				"{\"type\":\"text_delta\",\"text\":{\"text\":\"ab\"}}" + end,
				"{\"type\":\"text_delta\",\"text\":\"ab\",\"text\":\"cd\"}" + end,
				"{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"q\\\":1}\"}" + end,
				"{\"type\":\"text_delta\",\"texts\":\"ab\"}" + end, "{\"type\":\"text_delta\"}" + end,
				"{\"type\":\"text_delta\",\"text\":\"ab\"}}\n\n",
				"{\"type\":\"text_delta\",\"text\":\"ab\"},\"usage\":{\"output_tokens\":9}" + end,
				"{\"type\":\"text_delta\",\"text\":\"a\nb\"}" + end, "{\"type\":\"text_delta\",\"text\":\"ab" + end,
				"{\"type\":\"text_delta\",\"text\":\"ab\"}" + end.replace("\n", "\r\n"),
				"\"ab\"" + end, "{}" + end };
		for (String rest : rests) {
			assertReadsAsAloneAfter(taught, 4, prefix + rest);
		}
		// a delta with text after its first string: its end holds text, so it is read from the value, not the string
		String twoStrings = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\",\"refusal\":\"xyz\"}}]}\n\n";
		assertThat(meter(twoStrings.repeat(4)).usage().streamedTextBytes()).isEqualTo(20);
		assertThat(meter(twoStrings.repeat(3) + twoStrings.replace("hi", "h")).usage().streamedTextBytes())
			.isEqualTo(19);
	}

	@Test
	void anEventAfterOnesWhoseEndsDifferInOneStringValueReadsAsItReadsAlone() {
		// OpenAI pads each chunk with a random obfuscation string: three events teach the cheap path an end
		// matched around that string; each fourth one must add exactly what it adds read alone
		String prefix = "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":";
		String usage = "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7}";
		String taught = prefix + "{\"content\":\"hi\"}" + padded("abc") + prefix + "{\"content\":\"yo\"}"
				+ padded("defgh") + prefix + "{\"content\":\"ok\"}" + padded("x");
		String[] rests = { "{\"content\":\"ab\"}" + padded(""), "{\"content\":\"ab\"}" + padded("a\\\"b\\\\"),
				"{\"content\":\"ab\"}" + padded("\\\"},\\\"usage\\\":{\\\"prompt_tokens\\\":1}"),
				"{\"content\":\"ab\"}" + padded("a\nb"), "{\"content\":\"ab\"}" + padded("abc").replace("\n", "\r\n"),
				"{\"content\":\"ab\"}" + padded("abc").replace("\"usage\":null", usage),
				"{\"content\":\"ab\"}" + padded("abc").replace("\"}\n\n", "\"," + usage + "}\n\n"),
				"{\"content\":\"ab\"}" + padded("abc").replace("\"obfuscation\":\"abc\"", "\"obfuscation\":5"),
				"{\"content\":\"ab\"}" + padded("abc").replace("obfuscation", "error"),
				"{\"content\":\"ab\"}" + padded("abc").replace("\n\n", "\nid: 4\n\n"),
				"{\"content\":\"ab\",\"refusal\":\"cd\"}" + padded("abc"), "{\"content\":\"ab" + padded("abc"),
				"{\"content\":\"ab\"}" + padded("abc").substring(0, padded("abc").length() - 1) };
		for (String rest : rests) {
			assertReadsAsAloneAfter(taught, 6, prefix + rest);
		}
		// a string that differs inside the delta may be text: the end is not matched around it
		String refusal = prefix + "{\"content\":\"hi\",\"refusal\":\"\"}" + padded("abc");
		assertReadsAsAloneAfter(refusal + refusal, 4, prefix + "{\"content\":\"hi\",\"refusal\":\"xyz\"}" + padded("abc"));
		// nor around a key: this one becomes usage
		String decoy = prefix + "{\"content\":\"hi\"}" + padded("abc").replace("\"usage\":null", usage.replace("usage", "usagx"));
		assertReadsAsAloneAfter(decoy + decoy, 4, prefix + "{\"content\":\"ab\"}" + padded("abc").replace("\"usage\":null", usage));
	}

	@Test
	void aResponsesDeltaAfterOnesNumberedOtherwiseReadsAsItReadsAlone() {
		// the Responses API numbers its events before the delta and pads them after it: three events (their
		// numbers of one and two digits) teach the cheap path a prefix matched around the number and an end
		// around the padding; each fourth one must add exactly what it adds read alone
		String taught = responsesDelta("9", "\"hi\"", "abc") + responsesDelta("10", "\"yo\"", "defgh")
				+ responsesDelta("11", "\"ok\"", "x");
		String[][] rests = { { "12", "\"ab\"", "pq" }, { "100000", "\"a\\\"b\"", "" }, { "-1", "\"ab\"", "pq" },
				{ "1.5e3", "\"\"", "pq" }, { "7", "\"ab\"", "p\\\"q" }, { "", "\"ab\"", "pq" }, { "\"12\"", "\"ab\"", "pq" },
				{ "null", "\"ab\"", "pq" }, { " 12", "\"ab\"", "pq" }, { "12,\"x\":1", "\"ab\"", "pq" },
				{ "12,\"usage\":{\"input_tokens\":5,\"output_tokens\":6}", "\"ab\"", "pq" }, { "12", "{\"text\":\"ab\"}", "pq" },
				{ "12", "7", "pq" }, { "12", "\"a\nb\"", "pq" }, { "12", "\"ab", "pq" } };
		for (String[] rest : rests) {
			assertReadsAsAloneAfter(taught, 6, responsesDelta(rest[0], rest[1], rest[2]));
		}
		// another item after the number: read whole, then its prefix learnt anew
		String otherItem = responsesDelta("12", "\"ab\"", "pq").replace("msg_1", "msg_2");
		assertReadsAsAloneAfter(taught, 6, otherItem + otherItem.replace("\"ab\"", "\"cde\""));
	}

	/** A Responses API text delta event numbered {@code number}, as OpenAI orders its keys. */
	private static String responsesDelta(String number, String delta, String obfuscation) {
		return "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":"
				+ number + ",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":" + delta
				+ ",\"logprobs\":[],\"obfuscation\":\"" + obfuscation + "\"}\n\n";
	}

	/** The end of a chat chunk after its delta, with OpenAI's obfuscation padding. */
	private static String padded(String obfuscation) {
		return ",\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"" + obfuscation + "\"}\n\n";
	}

	/**
	 * {@code next} read after {@code taught} (events that teach the cheap path, {@code taughtText} bytes of
	 * text) adds exactly what it adds read alone.
	 */
	private static void assertReadsAsAloneAfter(String taught, long taughtText, String next) {
		assertThat(meter(taught).usage().streamedTextBytes()).isEqualTo(taughtText);
		Usage alone = meter(next).usage();
		assertThat(meter(taught + next).usage()).as("%s", next)
			.isEqualTo(new Usage(alone.outcome() == Outcome.REPORTED ? Outcome.REPORTED : Outcome.PARTIAL,
					alone.inputTokens(), alone.outputTokens(), alone.cacheCreationInputTokens(),
					alone.cacheReadInputTokens(), alone.totalTokens(), alone.streamedTextBytes() + taughtText));
	}

	/**
	 * The usage of {@code body} read whole (the cheap path where it applies), by the full scan alone, and byte
	 * by byte (every event carried across slices), which must agree.
	 */
	private static Usage sameOnBothPaths(String body) {
		byte[] bytes = utf8(body);
		Usage whole = meter(body).usage();
		UsageMeter fullScan = UsageMeter.fullScanOnly(100, false);
		fullScan.pass(bytes);
		fullScan.finish();
		assertThat(whole).as("%s by the cheap path and by the full scan", body).isEqualTo(fullScan.usage());
		UsageMeter byteByByte = new UsageMeter(100, false);
		for (byte b : bytes) {
			byteByByte.pass(new byte[] { b });
		}
		byteByByte.finish();
		assertThat(byteByByte.usage()).as("%s byte by byte", body).isEqualTo(whole);
		return whole;
	}

	private static UsageMeter meter(String body) {
		UsageMeter meter = new UsageMeter(100, false);
		meter.pass(utf8(body));
		meter.finish();
		return meter;
	}

	private static void send(ByteArrayOutputStream sent, ByteBuffer buffer) {
		byte[] bytes = new byte[buffer.remaining()];
		buffer.duplicate().get(bytes);
		sent.writeBytes(bytes);
	}

	private static String crlf(String body) {
		return body.replace("\n", "\r\n");
	}

	private static String cr(String body) {
		return body.replace("\n", "\r");
	}


}
