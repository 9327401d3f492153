package io.windowlimiter.metering;

import java.nio.charset.StandardCharsets;

/**
 * What an LLM request body asks for, read once at admission from the whole body (requests are small and
 * the gateway has them in hand; responses are the ones read as they pass): whether it streams, whether it
 * asked for the usage of its stream, the largest output it allows. A body that is not a JSON object reads
 * as a request of kind {@link Kind#UNKNOWN} that does not stream, and is still estimated by its length.
 */
public final class LlmRequest {

	/** Which endpoint the body is for, told by its fields (routes may rewrite paths). */
	public enum Kind {

		/** OpenAI {@code /v1/chat/completions}: has {@code messages}. */
		CHAT_COMPLETIONS,

		/** OpenAI's legacy {@code /v1/completions}: has {@code prompt}. */
		COMPLETIONS,

		/** OpenAI {@code /v1/responses}: has {@code input}; its streams always end with their usage. */
		RESPONSES,

		/** Anthropic {@code /v1/messages}; its streams always carry their usage. */
		MESSAGES,

		/** Not a JSON object, or none of the fields above. */
		UNKNOWN

	}

	private static final byte[] ADD_STREAM_OPTIONS = bytes("\"stream_options\":{\"include_usage\":true},");

	private static final byte[] ADD_INCLUDE_USAGE = bytes("\"include_usage\":true");

	private static final byte[] TRUE = bytes("true");

	private static final byte[] STREAM_OPTIONS_OBJECT = bytes("{\"include_usage\":true}");

	private final LlmApi api;

	private final int bodyLength;

	private final Reader read;

	private LlmRequest(LlmApi api, int bodyLength, Reader read) {
		this.api = api;
		this.bodyLength = bodyLength;
		this.read = read;
	}

	/** Reads a request body (not kept). */
	public static LlmRequest read(LlmApi api, byte[] body) {
		Reader reader = new Reader();
		JsonScanner scanner = new JsonScanner(reader);
		scanner.feed(body, 0, body.length);
		scanner.finish();
		reader.json = scanner.complete() && reader.objectStart >= 0;
		return new LlmRequest(api, body.length, reader);
	}

	public LlmApi api() {
		return this.api;
	}

	public Kind kind() {
		if (!this.read.json) {
			return Kind.UNKNOWN;
		}
		if (this.api == LlmApi.ANTHROPIC) {
			return Kind.MESSAGES;
		}
		if (this.read.input) {
			return Kind.RESPONSES;
		}
		if (this.read.messages) {
			return Kind.CHAT_COMPLETIONS;
		}
		return this.read.prompt ? Kind.COMPLETIONS : Kind.UNKNOWN;
	}

	public int bodyLength() {
		return this.bodyLength;
	}

	/** {@code "stream": true}. */
	public boolean stream() {
		return this.read.json && this.read.stream;
	}

	/** {@code "stream_options": {"include_usage": true}}: the client wants the usage chunk itself. */
	public boolean includeUsage() {
		return this.read.json && this.read.includeUsage;
	}

	/**
	 * The largest of {@code max_tokens}, {@code max_completion_tokens} and {@code max_output_tokens} (the
	 * first of each name, a non-negative integer), or -1 when the request names none.
	 */
	public long maxOutputTokens() {
		return this.read.json ? this.read.maxOutput : -1;
	}

	/**
	 * An OpenAI chat completions (or legacy completions) stream that did not ask for its usage: OpenAI
	 * sends a stream's usage only when asked, so the gateway must add
	 * {@code "stream_options":{"include_usage":true}} ({@link #withIncludeUsage(byte[])}) and strip the
	 * usage-only chunk from what the client receives ({@link UsageMeter}). The Responses API and Anthropic
	 * always send it; the Responses API refuses the option.
	 */
	public boolean needsIncludeUsage() {
		Kind kind = kind();
		return this.api == LlmApi.OPENAI && (kind == Kind.CHAT_COMPLETIONS || kind == Kind.COMPLETIONS)
				&& stream() && !includeUsage();
	}

	/**
	 * The body to send upstream: the one read, with {@code "include_usage":true} in its
	 * {@code stream_options} (added, or replacing another value), every other byte as it was; the same array
	 * when nothing {@link #needsIncludeUsage() needs} adding.
	 * @param body the bytes this request was read from
	 */
	public byte[] withIncludeUsage(byte[] body) {
		if (body.length != this.bodyLength) {
			throw new IllegalArgumentException("not the body this request was read from: " + body.length
					+ " bytes, read " + this.bodyLength);
		}
		Reader read = this.read;
		if (!needsIncludeUsage()) {
			return body;
		}
		if (read.streamOptionsKind == null) {
			return insert(body, (int) read.objectStart + 1, ADD_STREAM_OPTIONS);
		}
		if (read.streamOptionsKind != JsonScanner.Kind.OBJECT) {
			return replace(body, read.streamOptionsStart, read.streamOptionsEnd, STREAM_OPTIONS_OBJECT);
		}
		if (read.includeUsageStart >= 0) {
			return replace(body, read.includeUsageStart, read.includeUsageEnd, TRUE);
		}
		byte[] field = ADD_INCLUDE_USAGE;
		if (read.streamOptionsSize > 0) {
			field = bytes("\"include_usage\":true,");
		}
		return insert(body, (int) read.streamOptionsStart + 1, field);
	}

	private static byte[] insert(byte[] body, int at, byte[] added) {
		return replace(body, at, at, added);
	}

	private static byte[] replace(byte[] body, long start, long end, byte[] replacement) {
		byte[] out = new byte[body.length - (int) (end - start) + replacement.length];
		System.arraycopy(body, 0, out, 0, (int) start);
		System.arraycopy(replacement, 0, out, (int) start, replacement.length);
		System.arraycopy(body, (int) end, out, (int) start + replacement.length, body.length - (int) end);
		return out;
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	@Override
	public String toString() {
		return "LlmRequest[" + this.api.routeName() + " " + kind() + ", " + this.bodyLength + " bytes, stream="
				+ stream() + ", includeUsage=" + includeUsage() + ", maxOutputTokens=" + maxOutputTokens() + "]";
	}

	/** The top-level fields of interest, with the offsets a rewrite needs. */
	private static final class Reader implements JsonScanner.Listener {

		boolean json;

		long objectStart = -1;

		boolean stream;

		boolean includeUsage;

		long maxOutput = -1;

		boolean messages;

		boolean input;

		boolean prompt;

		JsonScanner.Kind streamOptionsKind;

		long streamOptionsStart = -1;

		long streamOptionsEnd = -1;

		int streamOptionsSize;

		/** A value of {@code include_usage} other than {@code true}, to replace; -1 when absent or true. */
		long includeUsageStart = -1;

		long includeUsageEnd = -1;

		@Override
		public void value(JsonScanner scanner, int depth, JsonScanner.Kind kind, long start, long end) {
			if (depth == 0) {
				if (kind == JsonScanner.Kind.OBJECT) {
					this.objectStart = start;
				}
				return;
			}
			if (depth == 1) {
				topLevel(scanner, kind, start, end);
			}
			else if (depth == 2 && this.streamOptionsKind == JsonScanner.Kind.OBJECT
					&& scanner.levelIs(1, "stream_options") && scanner.levelIs(2, "include_usage")) {
				if (kind == JsonScanner.Kind.TRUE) {
					this.includeUsage = true;
				}
				else if (this.includeUsageStart < 0) {
					// a container's end is known at its containerEnd
					this.includeUsageStart = start;
					this.includeUsageEnd = end;
				}
			}
		}

		@Override
		public void containerEnd(JsonScanner scanner, int depth, JsonScanner.Kind kind, int size, long end) {
			if (depth == 1 && scanner.levelIs(1, "stream_options") && this.streamOptionsStart >= 0
					&& this.streamOptionsEnd == this.streamOptionsStart + 1) {
				this.streamOptionsSize = size;
				this.streamOptionsEnd = end;
			}
			else if (depth == 2 && this.includeUsageStart >= 0 && this.includeUsageEnd == this.includeUsageStart + 1
					&& scanner.levelIs(1, "stream_options") && scanner.levelIs(2, "include_usage")) {
				this.includeUsageEnd = end;
			}
		}

		private void topLevel(JsonScanner scanner, JsonScanner.Kind kind, long start, long end) {
			if (scanner.levelIs(1, "stream")) {
				this.stream = kind == JsonScanner.Kind.TRUE;
			}
			else if (scanner.levelIs(1, "stream_options")) {
				if (this.streamOptionsKind == null) {
					this.streamOptionsKind = kind;
					this.streamOptionsStart = start;
					this.streamOptionsEnd = end;
				}
			}
			else if (kind == JsonScanner.Kind.NUMBER && (scanner.levelIs(1, "max_tokens")
					|| scanner.levelIs(1, "max_completion_tokens") || scanner.levelIs(1, "max_output_tokens"))) {
				this.maxOutput = Math.max(this.maxOutput, scanner.number());
			}
			else if (scanner.levelIs(1, "messages")) {
				this.messages = true;
			}
			else if (scanner.levelIs(1, "input")) {
				this.input = true;
			}
			else if (scanner.levelIs(1, "prompt")) {
				this.prompt = true;
			}
		}

	}

}
