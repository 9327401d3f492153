package io.windowlimiter.demo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What the demo LLM backend of both demo gateways answers an OpenAI chat completions request, without web
 * types: each gateway writes it with its own server. As usage it reports a quarter of the request body's
 * length as prompt tokens and {@value #OUTPUT_TOKENS} output tokens; with {@code "stream":true} it answers
 * five text chunks and the one that finishes the choice, {@link #EVENT_INTERVAL} apart (then the usage chunk when
 * {@code "include_usage":true}, as OpenAI orders them), then {@code [DONE]}, else one JSON answer.
 */
public final class DemoChatCompletion {

	/** The output tokens every answer reports. */
	public static final int OUTPUT_TOKENS = 40;

	/** How long a stream waits between two events. */
	public static final Duration EVENT_INTERVAL = Duration.ofMillis(200);

	private final boolean stream;

	private final boolean includeUsage;

	private final String usage;

	private DemoChatCompletion(String requestBody) {
		String compact = requestBody.replace(" ", "");
		this.stream = compact.contains("\"stream\":true");
		this.includeUsage = compact.contains("\"include_usage\":true");
		long prompt = Math.max(1, requestBody.length() / 4);
		this.usage = "{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + OUTPUT_TOKENS + ",\"total_tokens\":"
				+ (prompt + OUTPUT_TOKENS) + "}";
	}

	/** The answer to a request with this body (empty when it had none). */
	public static DemoChatCompletion answering(String requestBody) {
		return new DemoChatCompletion(requestBody);
	}

	/** Whether the request asked for a stream: answer {@link #events()} as text/event-stream, else {@link #json()}. */
	public boolean stream() {
		return this.stream;
	}

	/** The JSON answer (application/json). */
	public String json() {
		return "{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion\",\"model\":\"demo\",\"choices\":"
				+ "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello from the demo LLM\"},"
				+ "\"finish_reason\":\"stop\"}],\"usage\":" + this.usage + "}";
	}

	/** The data of each event of the stream, in order, {@code [DONE]} last; each is written {@code data:<data>\n\n}. */
	public List<String> events() {
		List<String> events = new ArrayList<>();
		for (String word : List.of("Hello", " from", " the", " demo", " LLM")) {
			events.add(chunk("[{\"index\":0,\"delta\":{\"content\":\"" + word + "\"},\"finish_reason\":null}]"));
		}
		// as OpenAI streams: the choice's finishing chunk, then (asked for) the usage chunk
		events.add(chunk("[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]"));
		if (this.includeUsage) {
			events.add(chunk("[],\"usage\":" + this.usage));
		}
		events.add("[DONE]");
		return events;
	}

	/** A chat completion chunk: its choices (and what follows them) after the envelope every chunk shares. */
	private static String chunk(String choices) {
		return "{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\",\"model\":\"demo\",\"choices\":"
				+ choices + "}";
	}

}
