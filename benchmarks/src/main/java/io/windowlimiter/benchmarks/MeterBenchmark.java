package io.windowlimiter.benchmarks;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;

import io.windowlimiter.metering.LlmApi;
import io.windowlimiter.metering.LlmRequest;
import io.windowlimiter.metering.TokenEstimate;
import io.windowlimiter.metering.UsageMeter;

/**
 * The LLM route's meter alone, in one JVM (issue 24): {@link UsageMeter} over whole streams handed in direct
 * slices of 8 KB as Netty hands them, stripping (the default: the gateway asked for the usage chunk) and
 * reading only. Streams of 2,000 text events each:
 * the SSE benchmark's chat completions stream ({@link SseStreams#body}), the same with OpenAI's per-chunk
 * {@code obfuscation} padding (random length: no two chunks the same length), Anthropic's messages stream, and
 * the Responses API's (numbered and padded deltas).
 * Prints a Markdown table of ns per byte and per stream, fastest of five rounds after three of warm-up; then one
 * of the request side, read once per call at admission ({@link LlmRequest#read} and its {@link TokenEstimate}): a
 * chat request of about 2 KB (a system prompt, a tool's schema, a few turns) and a conversation of about 200 KB.
 * Run (after a build of the benchmarks): {@code java -jar benchmarks/target/benchmarks.jar meter}.
 */
public final class MeterBenchmark {

	private static final int SLICE_BYTES = 8 * 1024;

	private static long sink;

	private MeterBenchmark() {
	}

	public static void main(String[] args) {
		String[] names = { "chat completions", "chat completions, obfuscation", "anthropic messages",
				"responses, obfuscation" };
		byte[][] streams = { SseStreams.body(2000, true), obfuscated(2000), anthropic(2000), responses(2000) };
		System.out.printf(Locale.ROOT, "| stream | bytes | read ns/byte | strip ns/byte | strip us/stream |%n");
		System.out.printf(Locale.ROOT, "|---|---:|---:|---:|---:|%n");
		for (int s = 0; s < streams.length; s++) {
			ByteBuffer[] slices = slices(streams[s]);
			double read = fastest(slices, false);
			double strip = fastest(slices, true);
			int length = streams[s].length;
			System.out.printf(Locale.ROOT, "| %s | %,d | %.3f | %.3f | %.1f |%n", names[s], length, read / length,
					strip / length, strip / 1000);
		}
		System.out.printf(Locale.ROOT, "%n| request body | bytes | read ns/byte | read us/body |%n");
		System.out.printf(Locale.ROOT, "|---|---:|---:|---:|%n");
		String[] requestNames = { "chat request", "long conversation" };
		byte[][] requests = { chatRequest(4), chatRequest(500) };
		for (int r = 0; r < requests.length; r++) {
			double read = fastestRead(requests[r]);
			System.out.printf(Locale.ROOT, "| %s | %,d | %.3f | %.2f |%n", requestNames[r], requests[r].length,
					read / requests[r].length, read / 1000);
		}
		if (sink == 42) {
			System.out.println();
		}
	}

	/** Nanoseconds per body read and estimated, fastest round. */
	private static double fastestRead(byte[] body) {
		double best = Double.MAX_VALUE;
		int reads = Math.max(200, 20_000_000 / body.length);
		for (int round = 0; round < 8; round++) {
			long start = System.nanoTime();
			for (int n = 0; n < reads; n++) {
				LlmRequest request = LlmRequest.read(LlmApi.OPENAI, body);
				sink += TokenEstimate.of(request, 1_000_000).tokens() + (request.needsIncludeUsage() ? 1 : 0);
			}
			double perRead = (double) (System.nanoTime() - start) / reads;
			if (round >= 3) {
				best = Math.min(best, perRead);
			}
		}
		return best;
	}

	/** A streaming chat request as the SDKs send it: a system prompt, a tool, then {@code turns} user/assistant pairs. */
	private static byte[] chatRequest(int turns) {
		StringBuilder json = new StringBuilder("{\"model\":\"gpt-4.1\",\"stream\":true,\"max_completion_tokens\":2048,")
			.append("\"temperature\":0.2,\"messages\":[{\"role\":\"system\",\"content\":\"You are a careful assistant. ")
			.append("Answer briefly, cite the tool's results, and say so when you do not know.\"}");
		for (int i = 0; i < turns; i++) {
			json.append(",{\"role\":\"user\",\"content\":\"What is the weather in city number ").append(i)
				.append(" today, and should I take an umbrella? \\\"Yes\\\" or \\\"no\\\" is enough.\"}")
				.append(",{\"role\":\"assistant\",\"content\":\"It is 18 \\u00b0C with light rain in city ")
				.append(i).append(": take an umbrella. Yes.\"}");
		}
		json.append("],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",")
			.append("\"description\":\"The weather of a city today\",\"parameters\":{\"type\":\"object\",")
			.append("\"properties\":{\"city\":{\"type\":\"string\"},\"unit\":{\"type\":\"string\",")
			.append("\"enum\":[\"celsius\",\"fahrenheit\"]}},\"required\":[\"city\"]}}}],\"user\":\"bench\"}");
		return json.toString().getBytes(StandardCharsets.UTF_8);
	}

	/** Nanoseconds per stream, fastest round. */
	private static double fastest(ByteBuffer[] slices, boolean strip) {
		double best = Double.MAX_VALUE;
		UsageMeter.Output output = new UsageMeter.Output() {

			@Override
			public void held(byte[] bytes, int offset, int length) {
				sink += length;
			}

			@Override
			public void slice(int from, int to) {
				sink += to - from;
			}

		};
		for (int round = 0; round < 8; round++) {
			int streams = 1000;
			long start = System.nanoTime();
			for (int n = 0; n < streams; n++) {
				UsageMeter meter = new UsageMeter(1, strip);
				for (ByteBuffer slice : slices) {
					meter.pass(slice, output);
				}
				meter.finish();
				sink += meter.usage().tokens();
			}
			double perStream = (double) (System.nanoTime() - start) / streams;
			if (round >= 3) {
				best = Math.min(best, perStream);
			}
		}
		return best;
	}

	private static ByteBuffer[] slices(byte[] stream) {
		ByteBuffer[] slices = new ByteBuffer[(stream.length + SLICE_BYTES - 1) / SLICE_BYTES];
		for (int i = 0; i < slices.length; i++) {
			int at = i * SLICE_BYTES;
			int length = Math.min(SLICE_BYTES, stream.length - at);
			slices[i] = ByteBuffer.allocateDirect(length).put(stream, at, length).flip();
		}
		return slices;
	}

	/** Chat completions chunks as OpenAI sends them by default since 2025: padded by a random string. */
	private static byte[] obfuscated(int events) {
		Random random = new Random(1);
		String head = "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1764806400,"
				+ "\"model\":\"gpt-4o-mini\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_bench\","
				+ "\"choices\":[{\"index\":0,\"delta\":";
		StringBuilder sse = new StringBuilder(events * 260);
		for (int i = 0; i < events; i++) {
			sse.append(head).append("{\"content\":\" word").append(i).append("\"},\"logprobs\":null,")
				.append("\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"")
				.append("abcdefghijklmnopqrstuvwxyz", 0, 1 + random.nextInt(20)).append("\"}\n\n");
		}
		sse.append("data: {\"id\":\"chatcmpl-bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":24,")
			.append("\"completion_tokens\":").append(events).append(",\"total_tokens\":").append(24 + events)
			.append("}}\n\ndata: [DONE]\n\n");
		return sse.toString().getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * The Responses API's stream: response.created, text deltas (each numbered before its delta and padded after
	 * it, as OpenAI sends them), response.completed with the usage.
	 */
	private static byte[] responses(int events) {
		Random random = new Random(2);
		StringBuilder sse = new StringBuilder(events * 240);
		sse.append("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,")
			.append("\"response\":{\"id\":\"resp_bench\",\"status\":\"in_progress\",\"usage\":null}}\n\n");
		for (int i = 0; i < events; i++) {
			sse.append("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",")
				.append("\"sequence_number\":").append(i + 1).append(",\"item_id\":\"msg_bench\",\"output_index\":0,")
				.append("\"content_index\":0,\"delta\":\" word").append(i).append("\",\"logprobs\":[],\"obfuscation\":\"")
				.append("abcdefghijklmnopqrstuvwxyz", 0, 1 + random.nextInt(20)).append("\"}\n\n");
		}
		sse.append("event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":")
			.append(events + 1).append(",\"response\":{\"id\":\"resp_bench\",\"status\":\"completed\",")
			.append("\"usage\":{\"input_tokens\":24,\"output_tokens\":").append(events).append(",\"total_tokens\":")
			.append(24 + events).append("}}}\n\n");
		return sse.toString().getBytes(StandardCharsets.UTF_8);
	}

	/** Anthropic's messages stream: message_start, text deltas, message_delta with the output tokens. */
	private static byte[] anthropic(int events) {
		StringBuilder sse = new StringBuilder(events * 160);
		sse.append("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_bench\",")
			.append("\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],")
			.append("\"usage\":{\"input_tokens\":24,\"output_tokens\":1}}}\n\n");
		sse.append("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,")
			.append("\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
		for (int i = 0; i < events; i++) {
			sse.append("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,")
				.append("\"delta\":{\"type\":\"text_delta\",\"text\":\" word").append(i).append("\"}}\n\n");
		}
		sse.append("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
		sse.append("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},")
			.append("\"usage\":{\"output_tokens\":").append(events).append("}}\n\n");
		sse.append("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
		return sse.toString().getBytes(StandardCharsets.UTF_8);
	}

}
