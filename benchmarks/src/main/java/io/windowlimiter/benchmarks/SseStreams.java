package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The SSE benchmark's downstream content: static OpenAI chat completion streams of a given number of content
 * events, written as files at run time, and the nginx locations serving them to a POST. {@code /sse/<n>} sends
 * a stream at once; {@code /slow/<n>} sends all but its last {@link #TAIL_BYTES} at once, then trickles the
 * rest at {@code tailRate} bytes a second, so that many streams stay open after most of their bytes passed.
 */
final class SseStreams {

	/** The bytes of a slow stream sent slowly: its end, the usage chunk and [DONE] included. */
	static final int TAIL_BYTES = 1200;

	static final int PROMPT_TOKENS = 24;

	private static final String CHUNK = "{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
			+ "\"created\":1764806400,\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp_bench\",";

	private final Path dir;

	private final List<Integer> lengths;

	SseStreams(Path workDir, List<Integer> lengths) throws IOException {
		this.dir = workDir.resolve("sse");
		this.lengths = List.copyOf(lengths);
		Files.createDirectories(this.dir.resolve("sse"));
		for (int events : lengths) {
			Files.write(this.dir.resolve("sse").resolve(Integer.toString(events)), body(events, true));
		}
	}

	/**
	 * A stream of {@code events} content chunks (the first with the role, the last with finish_reason), then,
	 * with {@code usage}, the usage-only chunk OpenAI sends when asked ({@code "choices":[]}), then {@code [DONE]}.
	 */
	static byte[] body(int events, boolean usage) {
		StringBuilder sse = new StringBuilder(events * 200);
		for (int i = 0; i < events; i++) {
			String delta = (i == 0) ? "{\"role\":\"assistant\",\"content\":\"\"}"
					: String.format(Locale.ROOT, "{\"content\":\" word%d\"}", i);
			String finish = (i == events - 1) ? "\"stop\"" : "null";
			sse.append("data: ").append(CHUNK).append("\"choices\":[{\"index\":0,\"delta\":").append(delta)
				.append(",\"logprobs\":null,\"finish_reason\":").append(finish).append("}]}\n\n");
		}
		if (usage) {
			sse.append("data: ").append(CHUNK).append("\"choices\":[],\"usage\":{\"prompt_tokens\":").append(PROMPT_TOKENS)
				.append(",\"completion_tokens\":").append(events).append(",\"total_tokens\":")
				.append(PROMPT_TOKENS + events).append("}}\n\n");
		}
		sse.append("data: [DONE]\n\n");
		return sse.toString().getBytes(StandardCharsets.UTF_8);
	}

	/** The tokens a stream of {@code events} reports in its usage chunk. */
	static long usageTokens(int events) {
		return PROMPT_TOKENS + events;
	}

	/**
	 * The nginx directives: {@code /ready}, {@code /sse/<n>} and {@code /slow/<n>}. nginx's static module answers
	 * a POST with 405; {@code error_page 405 =200 $uri} serves the file instead (nginx redirects as a GET). A
	 * {@code sub_filter} that never matches makes nginx send the file chunked, without Content-Length, as OpenAI
	 * sends its streams.
	 */
	String locations(int tailRate) {
		String stream = "types { } default_type text/event-stream; error_page 405 =200 $uri; "
				+ "sub_filter_types text/event-stream; sub_filter '@@never@@' ''; ";
		StringBuilder conf = new StringBuilder("location = /ready { default_type text/plain; return 200 \"ok\\n\"; }\n");
		conf.append("location /sse/ { root ").append(this.dir).append("; ").append(stream).append("}\n");
		for (int events : this.lengths) {
			int size = body(events, true).length;
			conf.append("location = /slow/").append(events).append(" { alias ").append(this.dir.resolve("sse")
				.resolve(Integer.toString(events))).append("; ").append(stream).append("limit_rate_after ")
				.append(Math.max(0, size - TAIL_BYTES)).append("; limit_rate ").append(tailRate).append("; }\n");
		}
		return conf.toString();
	}

}
