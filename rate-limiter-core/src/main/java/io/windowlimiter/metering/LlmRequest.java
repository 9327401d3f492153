package io.windowlimiter.metering;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * What an LLM request body asks for, read once at admission from the whole body (requests are small and
 * the gateway has them in hand; responses are the ones read as they pass): whether it streams, whether it
 * asked for the usage of its stream, the largest output it allows and how many choices. A body that is not a
 * JSON object reads as a request of kind {@link Kind#UNKNOWN} that does not stream, and is still estimated by
 * its length.
 * <p>
 * The gateway meters exactly the request the upstream reads. Keys are read as JSON decodes them (escapes
 * included); a body the upstream could read otherwise than the gateway is {@linkplain #refusal() refused}, with
 * the field it names, before anything is reserved or sent:
 * <ul>
 * <li>a field the gateway reads ({@link Field}) given twice, under any spelling: JavaScript's, Python's and Go's
 * decoders keep the last, so a second {@code stream_options} could switch off the usage the gateway asked for;
 * likewise {@code include_usage} twice in {@code stream_options};</li>
 * <li>such a field spelled in another case ({@code Stream}, or with Go's Unicode folds such as {@code ſtream}): Go's
 * decoder takes it for the field, others do not;</li>
 * <li>{@code stream} other than {@code true}, {@code false} or {@code null} (lenient decoders take
 * {@code "true"} or {@code 1} for true); a token count or number of choices that is not a whole number in digits
 * ({@code "1000"}, {@code 1e3}, {@code 1000.0}: OpenAI refuses them, lenient servers read them), negative, or
 * zero choices;</li>
 * <li>a body that starts as a JSON object and is not one whole object the scanner reads (malformed, cut short,
 * deeper than {@value JsonScanner#MAX_DEPTH} levels, or with {@code NaN}, which Python's decoder reads), and one
 * in UTF-16 or UTF-32 or after a byte order mark (Python's decoder reads those as JSON; RFC 8259 wants UTF-8).</li>
 * </ul>
 * Refusing rather than rewriting: a rewrite would pick one of two values the client sent. It costs an honest client
 * nothing: the official SDKs write each field once, as documented, counts as integers, in UTF-8.
 */
public final class LlmRequest {

	/** Which endpoint the body is for, told by its fields (routes may rewrite paths). */
	public enum Kind {

		/** OpenAI {@code /v1/chat/completions}: has {@code messages}. */
		CHAT_COMPLETIONS,

		/** OpenAI's legacy {@code /v1/completions}: has {@code prompt} (a string or an array). */
		COMPLETIONS,

		/**
		 * OpenAI {@code /v1/responses}: has {@code input}, or a {@code prompt} that is an object (a prompt template);
		 * its streams always end with their usage.
		 */
		RESPONSES,

		/** Anthropic {@code /v1/messages}; its streams always carry their usage. */
		MESSAGES,

		/** Not a JSON object, or none of the fields above. */
		UNKNOWN

	}

	/**
	 * The top-level fields the gateway reads: each must come once and be spelled as here ({@code model} included:
	 * limits per model count by it, and what the upstream bills must never be ambiguous either).
	 */
	enum Field {

		STREAM("stream"), STREAM_OPTIONS("stream_options"), MODEL("model"), MAX_TOKENS("max_tokens"),
		MAX_COMPLETION_TOKENS("max_completion_tokens"), MAX_OUTPUT_TOKENS("max_output_tokens"), N("n"),
		BEST_OF("best_of"), MESSAGES("messages"), INPUT("input"), PROMPT("prompt");

		private static final Field[] ALL = values();

		final String key;

		Field(String key) {
			this.key = key;
		}

		/** The field the key at the top level is, in any case; null when it is none of them. */
		static @Nullable Field at(JsonScanner scanner) {
			for (Field field : ALL) {
				if (scanner.levelFolds(1, field.key)) {
					return field;
				}
			}
			return null;
		}

	}

	/**
	 * Why the gateway refuses a body: answered 400, naming the field.
	 * @param field the field's name (a nested one as {@code stream_options.include_usage}); null when the body as a
	 * whole is the problem
	 * @param detail what is wrong and what is allowed, for a human
	 */
	public record Refusal(@Nullable String field, String detail) {
	}

	private static final String INCLUDE_USAGE = "include_usage";

	private static final byte[] ADD_STREAM_OPTIONS = bytes("\"stream_options\":{\"include_usage\":true},");

	private static final byte[] ADD_INCLUDE_USAGE = bytes("\"include_usage\":true");

	private static final byte[] TRUE = bytes("true");

	private static final byte[] STREAM_OPTIONS_OBJECT = bytes("{\"include_usage\":true}");

	private final LlmApi api;

	private final int bodyLength;

	private final Reader read;

	private final @Nullable String model;

	/**
	 * The longest {@code model} read, in bytes as sent: model names run to a few dozen characters (an ARN of a
	 * hundred or so); a longer one is refused rather than matched against the limits' patterns at every call.
	 */
	public static final int MAX_MODEL_BYTES = 512;

	private LlmRequest(LlmApi api, int bodyLength, Reader read, byte[] body) {
		this.api = api;
		this.bodyLength = bodyLength;
		this.read = read;
		this.model = (read.modelStart >= 0 && read.refusal == null)
				? JsonBytes.decodeString(body, (int) read.modelStart + 1, (int) read.modelEnd - 1) : null;
	}

	/** Reads a request body (not kept), in one pass. */
	public static LlmRequest read(LlmApi api, byte[] body) {
		Reader reader = new Reader();
		if (BodyEncoding.otherThanUtf8Object(body)) {
			reader.refuse(null, "The request body is a JSON object in UTF-16 or UTF-32, or after a byte order mark: "
					+ "some upstreams decode it, the gateway reads UTF-8 only; send UTF-8 JSON without a byte order mark "
					+ "(RFC 8259)");
			return new LlmRequest(api, body.length, reader, body);
		}
		JsonScanner scanner = new JsonScanner(reader);
		scanner.feed(body, 0, body.length);
		scanner.finish();
		reader.json = scanner.complete() && reader.objectStart >= 0;
		if (!reader.json && BodyEncoding.startsAsObject(body)) {
			reader.refuse(null, "The request body starts as a JSON object but is not one the gateway can read whole "
					+ "(malformed, cut short, NaN or Infinity, or nested deeper than " + JsonScanner.MAX_DEPTH
					+ " levels): the upstream might read it otherwise than the gateway meters it");
		}
		return new LlmRequest(api, body.length, reader, body);
	}

	/** Why the gateway refuses this body (a 400 naming the field), or null: it may be estimated and sent. */
	public @Nullable Refusal refusal() {
		return this.read.refusal;
	}

	public LlmApi api() {
		return this.api;
	}

	/**
	 * The model the body names at its top level ({@code "model": "gpt-4o"}), decoded as JSON decodes it (escapes
	 * included); null when it names none, or not as a string (the upstream refuses such a call): then only the
	 * limits without a model count the call.
	 */
	public @Nullable String model() {
		return this.read.json ? this.model : null;
	}

	public Kind kind() {
		if (!this.read.json) {
			return Kind.UNKNOWN;
		}
		if (this.api == LlmApi.ANTHROPIC) {
			return Kind.MESSAGES;
		}
		// the Responses API's prompt is an object (a template's id); legacy completions' a string or an array
		if (this.read.input || this.read.promptObject) {
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
	 * The largest of {@code max_tokens}, {@code max_completion_tokens} and {@code max_output_tokens} (whole
	 * numbers from 0; {@link Long#MAX_VALUE} for one larger than a long), or -1 when the request names none (or
	 * only {@code null}).
	 */
	public long maxOutputTokens() {
		return this.read.json ? this.read.maxOutput : -1;
	}

	/**
	 * How many outputs the upstream may generate, each up to {@link #maxOutputTokens()}: the larger of {@code n}
	 * (OpenAI chat completions' choices) and {@code best_of} (legacy completions, which generate that many and
	 * return {@code n}), 1 when it names neither; {@link Long#MAX_VALUE} for one larger than a long.
	 */
	public long choices() {
		return this.read.json ? Math.max(1, this.read.choices) : 1;
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
				&& stream() && !includeUsage() && this.read.refusal == null;
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
				+ stream() + ", includeUsage=" + includeUsage() + ", model=" + model() + ", maxOutputTokens=" + maxOutputTokens() + ", choices="
				+ choices() + ((this.read.refusal != null) ? ", refused: " + this.read.refusal.detail() : "") + "]";
	}

	/**
	 * The top-level fields of interest, with the offsets a rewrite needs, and the first reason to refuse the body.
	 */
	private static final class Reader implements JsonScanner.Listener {

		boolean json;

		long objectStart = -1;

		boolean stream;

		boolean includeUsage;

		long maxOutput = -1;

		long choices = -1;

		boolean messages;

		boolean input;

		boolean prompt;

		boolean promptObject;

		/** Where the string value of {@code model} starts (its opening quote) and ends; -1 when there is none. */
		long modelStart = -1;

		long modelEnd = -1;

		/** The fields met at the top level, a bit each ({@link Field#ordinal()}). */
		int seen;

		boolean includeUsageSeen;

		@Nullable Refusal refusal;

		JsonScanner.@Nullable Kind streamOptionsKind;

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
					&& scanner.levelIs(1, Field.STREAM_OPTIONS.key) && scanner.levelFolds(2, INCLUDE_USAGE)) {
				includeUsage(scanner, kind, start, end);
			}
		}

		@Override
		public void containerEnd(JsonScanner scanner, int depth, JsonScanner.Kind kind, int size, long end) {
			if (depth == 1 && scanner.levelIs(1, Field.STREAM_OPTIONS.key) && this.streamOptionsStart >= 0
					&& this.streamOptionsEnd == this.streamOptionsStart + 1) {
				this.streamOptionsSize = size;
				this.streamOptionsEnd = end;
			}
			else if (depth == 2 && this.includeUsageStart >= 0 && this.includeUsageEnd == this.includeUsageStart + 1
					&& scanner.levelIs(1, Field.STREAM_OPTIONS.key) && scanner.levelIs(2, INCLUDE_USAGE)) {
				this.includeUsageEnd = end;
			}
		}

		private void topLevel(JsonScanner scanner, JsonScanner.Kind kind, long start, long end) {
			Field field = Field.at(scanner);
			if (field == null) {
				return;
			}
			if (!scanner.levelIs(1, field.key)) {
				refuse(field.key, otherCase(field.key));
				return;
			}
			int bit = 1 << field.ordinal();
			if ((this.seen & bit) != 0) {
				refuse(field.key, twice(field.key));
				return;
			}
			this.seen |= bit;
			switch (field) {
				case STREAM -> {
					if (kind == JsonScanner.Kind.TRUE) {
						this.stream = true;
					}
					else if (kind != JsonScanner.Kind.FALSE && kind != JsonScanner.Kind.NULL) {
						refuse(field.key, "stream is not true, false or null in the request body; allowed: true, false, "
								+ "null (an upstream may read \"true\" or 1 as true)");
					}
				}
				case STREAM_OPTIONS -> {
					this.streamOptionsKind = kind;
					this.streamOptionsStart = start;
					this.streamOptionsEnd = end;
				}
				case MAX_TOKENS, MAX_COMPLETION_TOKENS, MAX_OUTPUT_TOKENS ->
					this.maxOutput = Math.max(this.maxOutput, count(scanner, field.key, kind, 0));
				case N, BEST_OF -> this.choices = Math.max(this.choices, count(scanner, field.key, kind, 1));
				case MESSAGES -> this.messages = true;
				case INPUT -> this.input = true;
				case PROMPT -> {
					this.prompt = true;
					this.promptObject = kind == JsonScanner.Kind.OBJECT;
				}
				case MODEL -> {
					if (kind == JsonScanner.Kind.STRING) {
						if (end - start - 2 > MAX_MODEL_BYTES) {
							refuse(field.key, "model in the request body is longer than " + MAX_MODEL_BYTES
									+ " bytes; allowed: a model's name (limits per model count calls by it)");
						}
						this.modelStart = start;
						this.modelEnd = end;
					}
				}
			}
		}

		/** {@code include_usage} in the one {@code stream_options} object. */
		private void includeUsage(JsonScanner scanner, JsonScanner.Kind kind, long start, long end) {
			String name = Field.STREAM_OPTIONS.key + "." + INCLUDE_USAGE;
			if (!scanner.levelIs(2, INCLUDE_USAGE)) {
				refuse(name, otherCase(name));
				return;
			}
			if (this.includeUsageSeen) {
				refuse(name, twice(name));
				return;
			}
			this.includeUsageSeen = true;
			if (kind == JsonScanner.Kind.TRUE) {
				this.includeUsage = true;
			}
			else {
				// a container's end is known at its containerEnd
				this.includeUsageStart = start;
				this.includeUsageEnd = end;
			}
		}

		/**
		 * A count's value, at least {@code least}; -1 for {@code null} (as if absent). Anything else is refused:
		 * OpenAI refuses a count that is not an integer, and a lenient upstream might read {@code "1000"} or
		 * {@code 1e3} as 1000 where the estimate would not. One larger than a long is {@link Long#MAX_VALUE}: the
		 * estimate is capped in any case.
		 */
		private long count(JsonScanner scanner, String name, JsonScanner.Kind kind, long least) {
			if (kind == JsonScanner.Kind.NULL) {
				return -1;
			}
			long value = (kind == JsonScanner.Kind.NUMBER) ? scanner.wholeNumber() : JsonScanner.NOT_WHOLE;
			if (value < least) {
				refuse(name, name + " in the request body is " + ((kind != JsonScanner.Kind.NUMBER) ? "not a number"
						: (value == JsonScanner.NOT_WHOLE) ? "not a whole number written in digits"
								: (value == JsonScanner.NEGATIVE) ? "negative" : "0")
						+ "; allowed: a whole number from " + least + " written in digits (not \"1000\", 1e3 or 1000.0), "
						+ "or null");
				return -1;
			}
			return value;
		}

		private static String twice(String name) {
			return name + " appears more than once in the request body (escaped spellings included): an upstream "
					+ "reads the last one, so the gateway cannot meter the call; send it once";
		}

		private static String otherCase(String name) {
			return "The request body has " + name + " spelled in another case: some upstreams read it as " + name
					+ ", others ignore it or refuse it, so the gateway cannot meter the call; spell it " + name;
		}

		/** The first reason found is the one answered. */
		void refuse(@Nullable String field, String detail) {
			if (this.refusal == null) {
				this.refusal = new Refusal(field, detail);
			}
		}

	}

}
