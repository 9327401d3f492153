package io.windowlimiter.metering;

/**
 * The usage figures found in one JSON document (a response body, or one SSE event's data), as a
 * {@link JsonScanner.Listener}. Every provider's shape is recognised at once, by path:
 * <ul>
 * <li>{@code usage.*}: OpenAI chat completions ({@code prompt_tokens}, {@code completion_tokens},
 * {@code total_tokens}), the Responses API's body and Anthropic's body and {@code message_delta}
 * ({@code input_tokens}, {@code output_tokens}, {@code cache_creation_input_tokens},
 * {@code cache_read_input_tokens});</li>
 * <li>{@code response.usage.*}: the Responses API's {@code response.completed} (and
 * {@code response.incomplete}, {@code response.failed});</li>
 * <li>{@code message.usage.*}: Anthropic's {@code message_start}, whose {@code output_tokens} is only a
 * first count, so it does not make the usage final.</li>
 * </ul>
 * The names do not clash between providers; OpenAI's {@code cached_tokens} sits one level deeper, inside
 * {@code input_tokens}, and is not added twice. Figures keep the largest value seen, as Anthropic's
 * counts are cumulative.
 */
final class UsageFigures implements JsonScanner.Listener {

	/** Keys whose string values, inside a {@code delta}, are streamed output text. */
	private static final String[] DELTA_TEXT_KEYS = { "content", "text", "partial_json", "thinking", "arguments",
			"refusal", "reasoning_content", "reasoning" };

	long input = -1;

	long output = -1;

	long cacheCreation = -1;

	long cacheRead = -1;

	long total = -1;

	/** OpenAI's cached prompt tokens: {@code usage.prompt_tokens_details.cached_tokens} or {@code input_tokens_details}. */
	long cached = -1;

	/** Bytes of output text streamed in deltas (escapes included), for a stream cut before its usage. */
	long textBytes;

	/** An output figure was reported by the event or body that closes a response. */
	boolean reported;

	/** The document has a top-level {@code "choices": []}. */
	boolean choicesEmpty;

	/** The document has a top-level {@code "usage": {...}}. */
	boolean usageObject;

	/** The document has a top-level {@code "error": {...}}: an OpenAI or Anthropic error, as a body or an event. */
	boolean error;

	void clear() {
		this.input = -1;
		this.output = -1;
		this.cacheCreation = -1;
		this.cacheRead = -1;
		this.total = -1;
		this.cached = -1;
		this.textBytes = 0;
		this.reported = false;
		this.choicesEmpty = false;
		this.usageObject = false;
		this.error = false;
	}

	void addTo(UsageFigures sum) {
		sum.input = Math.max(sum.input, this.input);
		sum.output = Math.max(sum.output, this.output);
		sum.cacheCreation = Math.max(sum.cacheCreation, this.cacheCreation);
		sum.cacheRead = Math.max(sum.cacheRead, this.cacheRead);
		sum.total = Math.max(sum.total, this.total);
		sum.cached = Math.max(sum.cached, this.cached);
		sum.textBytes += this.textBytes;
		sum.reported |= this.reported;
		sum.error |= this.error;
	}

	/** An OpenAI chat completions chunk that carries only the usage: {@code "choices": []} and a usage object. */
	boolean usageOnlyChunk() {
		return this.choicesEmpty && this.usageObject;
	}

	@Override
	public void value(JsonScanner scanner, int depth, JsonScanner.Kind kind, long start, long end) {
		switch (kind) {
			case NUMBER -> number(scanner, depth);
			case STRING -> text(scanner, depth, end - start);
			case OBJECT -> {
				if (depth == 1 && scanner.levelIs(1, "usage")) {
					this.usageObject = true;
				}
				else if (depth == 1 && scanner.levelIs(1, "error")) {
					this.error = true;
				}
			}
			default -> {
			}
		}
	}

	@Override
	public void containerEnd(JsonScanner scanner, int depth, JsonScanner.Kind kind, int size, long end) {
		if (depth == 1 && kind == JsonScanner.Kind.ARRAY && size == 0 && scanner.levelIs(1, "choices")) {
			this.choicesEmpty = true;
		}
	}

	private void number(JsonScanner scanner, int depth) {
		boolean closing;
		if (depth == 2 && scanner.levelIs(1, "usage")) {
			closing = true;
		}
		else if (depth == 3 && scanner.levelIs(2, "usage")
				&& (scanner.levelIs(1, "response") || scanner.levelIs(1, "message"))) {
			closing = scanner.levelIs(1, "response");
		}
		else {
			cached(scanner, depth);
			return;
		}
		long value = scanner.number();
		if (value < 0) {
			return;
		}
		if (scanner.levelIs(depth, "input_tokens") || scanner.levelIs(depth, "prompt_tokens")) {
			this.input = Math.max(this.input, value);
		}
		else if (scanner.levelIs(depth, "output_tokens") || scanner.levelIs(depth, "completion_tokens")) {
			this.output = Math.max(this.output, value);
			this.reported |= closing;
		}
		else if (scanner.levelIs(depth, "total_tokens")) {
			this.total = Math.max(this.total, value);
		}
		else if (scanner.levelIs(depth, "cache_creation_input_tokens")) {
			this.cacheCreation = Math.max(this.cacheCreation, value);
		}
		else if (scanner.levelIs(depth, "cache_read_input_tokens")) {
			this.cacheRead = Math.max(this.cacheRead, value);
		}
	}

	/**
	 * OpenAI's cached prompt tokens, one level below the usage's own figures: chat completions'
	 * {@code usage.prompt_tokens_details.cached_tokens}, the Responses API's
	 * {@code usage.input_tokens_details.cached_tokens} (in its body) or {@code response.usage.input_tokens_details...}
	 * (in {@code response.completed}).
	 */
	private void cached(JsonScanner scanner, int depth) {
		if (depth < 3 || depth > 4 || !scanner.levelIs(depth, "cached_tokens")
				|| !(scanner.levelIs(depth - 1, "prompt_tokens_details") || scanner.levelIs(depth - 1, "input_tokens_details"))
				|| !scanner.levelIs(depth - 2, "usage") || (depth == 4 && !scanner.levelIs(1, "response"))) {
			return;
		}
		long value = scanner.number();
		if (value >= 0) {
			this.cached = Math.max(this.cached, value);
		}
	}

	/**
	 * Output text of a stream: a string {@code delta} (Responses API), or a text key inside a {@code delta}
	 * object (chat completions' {@code choices[].delta.content}, Anthropic's {@code delta.text}). The final
	 * copies of the text ({@code response.output_text.done}, {@code response.completed}) are not inside a
	 * delta, so nothing is counted twice.
	 */
	private void text(JsonScanner scanner, int depth, long quotedLength) {
		if (depth == 0 || depth > JsonScanner.KEYED_DEPTH) {
			return;
		}
		long length = Math.max(0, quotedLength - 2);
		if (scanner.levelIs(depth, "delta")) {
			this.textBytes += length;
			return;
		}
		if (!isDeltaTextKey(scanner, depth)) {
			return;
		}
		for (int level = 1; level < depth; level++) {
			if (scanner.levelIs(level, "delta")) {
				this.textBytes += length;
				return;
			}
		}
	}

	private static boolean isDeltaTextKey(JsonScanner scanner, int depth) {
		for (String key : DELTA_TEXT_KEYS) {
			if (scanner.levelIs(depth, key)) {
				return true;
			}
		}
		return false;
	}

}
