package io.windowlimiter.metering;

/**
 * A JSON scanner fed a document in slices of any size that keeps no copy of it: it follows the nesting, keeps
 * the keys of the first {@value #KEYED_DEPTH} levels and tells its {@link Listener} of every value with the
 * path to it. String values are skipped, only their length is known; so its memory is fixed (about 1 KB)
 * whatever the document's length, and one over-long string or number costs nothing.
 * <p>
 * No UTF-8 decoding is needed: every byte of a multi-byte character is {@code >= 0x80}, never a structural
 * character, so a slice may end anywhere, inside a character included. Not thread-safe.
 */
final class JsonScanner {

	/** Deeper documents fail: no LLM payload nests this deep, and the stacks stay fixed. */
	static final int MAX_DEPTH = 128;

	/**
	 * Keys are kept for this many levels; deeper values are reported with keys that match nothing. 8: a chat
	 * completions tool call's {@code choices[].delta.tool_calls[].function.arguments} sits at 7.
	 */
	static final int KEYED_DEPTH = 8;

	/** Longer keys are not kept (they match nothing); every key this package looks for is shorter. */
	static final int MAX_KEY = 40;

	/** Longer numbers are reported without a value (usage figures are far shorter). */
	static final int MAX_LITERAL = 24;

	/** What a value is, as reported to the {@link Listener}. */
	enum Kind {

		OBJECT, ARRAY, STRING, NUMBER, TRUE, FALSE, NULL

	}

	/** Told of each value; {@code depth} is that of the container holding it (0 for the document itself). */
	interface Listener {

		/**
		 * A value starts (containers) or ends (scalars); offsets count every byte fed since the last
		 * {@link #reset()}: {@code start} is the value's first byte, {@code end} one past its last (for a
		 * container, {@code end == start + 1}).
		 */
		void value(JsonScanner scanner, int depth, Kind kind, long start, long end);

		/** A container ends, with the number of values it held. */
		default void containerEnd(JsonScanner scanner, int depth, Kind kind, int size, long end) {
		}

	}

	// states, as ints: an enum switch costs a lookup per byte on this hot path
	private static final int VALUE = 0;

	private static final int VALUE_OR_END = 1;

	private static final int KEY_OR_END = 2;

	private static final int KEY = 3;

	private static final int IN_KEY = 4;

	private static final int COLON = 5;

	private static final int IN_STRING = 6;

	private static final int IN_LITERAL = 7;

	private static final int AFTER_VALUE = 8;

	private static final int DONE = 9;

	private static final int FAILED = 10;

	private final Listener listener;

	private final boolean[] isArray = new boolean[MAX_DEPTH + 1];

	private final int[] size = new int[MAX_DEPTH + 1];

	private final byte[][] keys = new byte[KEYED_DEPTH + 1][MAX_KEY];

	/** Length of the key kept at each level, -1 when it matches nothing (too long, escaped, none yet). */
	private final int[] keyLength = new int[KEYED_DEPTH + 1];

	private final byte[] literal = new byte[MAX_LITERAL];

	private int literalLength;

	private boolean escaped;

	private int depth;

	private int state = VALUE;

	private long position;

	private long valueStart;

	JsonScanner(Listener listener) {
		this.listener = listener;
		reset();
	}

	/** Ready for a new document. */
	void reset() {
		this.depth = 0;
		this.state = VALUE;
		this.position = 0;
		this.escaped = false;
		this.literalLength = 0;
		java.util.Arrays.fill(this.keyLength, -1);
	}

	/** The document so far is not JSON; nothing more is reported until {@link #reset()}. */
	boolean failed() {
		return this.state == FAILED;
	}

	/** One whole value was read (trailing whitespace allowed). */
	boolean complete() {
		return this.state == DONE;
	}

	/** Bytes fed since the last {@link #reset()}. */
	long position() {
		return this.position;
	}

	/**
	 * Whether the value just reported sits at exactly this path from the document: keys of objects, or
	 * {@code "[]"} for any element of an array.
	 */
	boolean pathIs(int depth, String... path) {
		if (depth != path.length || depth > KEYED_DEPTH) {
			return false;
		}
		for (int level = 1; level <= depth; level++) {
			if (!levelIs(level, path[level - 1])) {
				return false;
			}
		}
		return true;
	}

	/** Whether the container at {@code level} (1 = the document's) is an array ("[]") or the given key. */
	boolean levelIs(int level, String key) {
		if (level > KEYED_DEPTH || level > this.depth) {
			return false;
		}
		if (this.isArray[level]) {
			return key.equals("[]");
		}
		int length = this.keyLength[level];
		if (length != key.length()) {
			return false;
		}
		byte[] kept = this.keys[level];
		for (int i = 0; i < length; i++) {
			if (kept[i] != key.charAt(i)) {
				return false;
			}
		}
		return true;
	}

	/** The number just reported as a non-negative long, or -1 (fraction, exponent, sign, too long). */
	long number() {
		if (this.literalLength == 0 || this.literalLength > 18) {
			return -1;
		}
		long value = 0;
		for (int i = 0; i < this.literalLength; i++) {
			int digit = this.literal[i] - '0';
			if (digit < 0 || digit > 9) {
				return -1;
			}
			value = value * 10 + digit;
		}
		return value;
	}

	void feed(byte[] bytes, int offset, int length) {
		int end = offset + length;
		int i = offset;
		while (i < end) {
			if (this.state == FAILED) {
				this.position += end - i;
				return;
			}
			if (this.state == IN_STRING) {
				i = skipString(bytes, i, end);
				continue;
			}
			if (this.state == IN_KEY) {
				int stop = i;
				while (stop < end && bytes[stop] != '"' && bytes[stop] != '\\' && !this.escaped) {
					stop++;
				}
				if (stop > i) {
					keyBytes(bytes, i, stop - i);
					this.position += stop - i;
					i = stop;
					continue;
				}
			}
			accept(bytes[i]);
			this.position++;
			i++;
		}
	}

	/** The hot loop of long texts: to the closing quote, keeping nothing; returns where it stopped. */
	private int skipString(byte[] bytes, int from, int end) {
		boolean escape = this.escaped;
		int i = from;
		while (i < end) {
			byte b = bytes[i++];
			if (escape) {
				escape = false;
			}
			else if (b == '\\') {
				escape = true;
			}
			else if (b == '"') {
				this.escaped = false;
				this.position += i - from;
				this.state = AFTER_VALUE;
				scalarEnd(Kind.STRING, this.position);
				return i;
			}
		}
		this.escaped = escape;
		this.position += i - from;
		return i;
	}

	/** The document ends here: a number or literal standing alone at the top is complete only now. */
	void finish() {
		if (this.state == IN_LITERAL && this.depth == 0) {
			endLiteral();
		}
	}

	private void accept(byte b) {
		switch (this.state) {
			case VALUE, VALUE_OR_END -> {
				if (JsonBytes.isSpace(b)) {
					return;
				}
				if (b == ']' && this.state == VALUE_OR_END) {
					close(true);
					return;
				}
				startValue(b);
			}
			case KEY_OR_END, KEY -> {
				if (JsonBytes.isSpace(b)) {
					return;
				}
				if (b == '}' && this.state == KEY_OR_END) {
					close(false);
				}
				else if (b == '"') {
					this.state = IN_KEY;
					if (this.depth <= KEYED_DEPTH) {
						this.keyLength[this.depth] = 0;
					}
				}
				else {
					fail();
				}
			}
			case IN_KEY -> keyByte(b);
			case COLON -> {
				if (b == ':') {
					this.state = VALUE;
				}
				else if (!JsonBytes.isSpace(b)) {
					fail();
				}
			}
			case IN_LITERAL -> {
				if (JsonBytes.isLiteral(b)) {
					if (this.literalLength < MAX_LITERAL) {
						this.literal[this.literalLength] = b;
					}
					this.literalLength++;
					return;
				}
				endLiteral();
				if (this.state != FAILED) {
					accept(b);
				}
			}
			case AFTER_VALUE -> {
				if (JsonBytes.isSpace(b)) {
					return;
				}
				boolean array = this.isArray[this.depth];
				if (b == ',') {
					this.state = array ? VALUE : KEY;
				}
				else if (b == (array ? ']' : '}')) {
					close(array);
				}
				else {
					fail();
				}
			}
			case DONE -> {
				if (!JsonBytes.isSpace(b)) {
					fail();
				}
			}
			default -> {
			}
		}
	}

	private void keyByte(byte b) {
		int level = this.depth;
		if (this.escaped) {
			this.escaped = false;
			return;
		}
		if (b == '"') {
			this.state = COLON;
			return;
		}
		if (level > KEYED_DEPTH || this.keyLength[level] < 0) {
			if (b == '\\') {
				this.escaped = true;
			}
			return;
		}
		if (b == '\\') {
			// no key looked for has an escape: this one matches nothing
			this.escaped = true;
			this.keyLength[level] = -1;
		}
		else if (this.keyLength[level] == MAX_KEY) {
			this.keyLength[level] = -1;
		}
		else {
			this.keys[level][this.keyLength[level]++] = b;
		}
	}

	/** A run of plain key bytes (no quote, no backslash). */
	private void keyBytes(byte[] bytes, int from, int count) {
		int level = this.depth;
		if (level > KEYED_DEPTH || this.keyLength[level] < 0) {
			return;
		}
		int kept = this.keyLength[level];
		if (kept + count > MAX_KEY) {
			this.keyLength[level] = -1;
			return;
		}
		System.arraycopy(bytes, from, this.keys[level], kept, count);
		this.keyLength[level] = kept + count;
	}

	private void startValue(byte b) {
		this.size[this.depth]++;
		this.valueStart = this.position;
		switch (b) {
			case '{' -> open(false);
			case '[' -> open(true);
			case '"' -> this.state = IN_STRING;
			default -> {
				if (b == '-' || b == 't' || b == 'f' || b == 'n' || (b >= '0' && b <= '9')) {
					this.state = IN_LITERAL;
					this.literal[0] = b;
					this.literalLength = 1;
				}
				else {
					fail();
				}
			}
		}
	}

	private void open(boolean array) {
		if (this.depth == MAX_DEPTH) {
			fail();
			return;
		}
		this.listener.value(this, this.depth, array ? Kind.ARRAY : Kind.OBJECT, this.position, this.position + 1);
		this.depth++;
		this.isArray[this.depth] = array;
		this.size[this.depth] = 0;
		if (this.depth <= KEYED_DEPTH) {
			this.keyLength[this.depth] = -1;
		}
		this.state = array ? VALUE_OR_END : KEY_OR_END;
	}

	private void close(boolean array) {
		int held = this.size[this.depth];
		this.depth--;
		this.state = this.depth == 0 ? DONE : AFTER_VALUE;
		this.listener.containerEnd(this, this.depth, array ? Kind.ARRAY : Kind.OBJECT, held, this.position + 1);
	}

	private void endLiteral() {
		Kind kind = literalKind();
		if (kind == null) {
			fail();
			return;
		}
		this.state = this.depth == 0 ? DONE : AFTER_VALUE;
		scalarEnd(kind, this.position);
	}

	private void scalarEnd(Kind kind, long end) {
		if (this.depth == 0) {
			this.state = DONE;
		}
		this.listener.value(this, this.depth, kind, this.valueStart, end);
	}

	private Kind literalKind() {
		if (matches("true")) {
			return Kind.TRUE;
		}
		if (matches("false")) {
			return Kind.FALSE;
		}
		if (matches("null")) {
			return Kind.NULL;
		}
		byte first = this.literal[0];
		if (first != '-' && (first < '0' || first > '9')) {
			return null;
		}
		int kept = Math.min(this.literalLength, MAX_LITERAL);
		for (int i = 0; i < kept; i++) {
			byte b = this.literal[i];
			if (!JsonBytes.isNumberByte(b)) {
				return null;
			}
		}
		if (this.literalLength > MAX_LITERAL) {
			this.literalLength = 0;
		}
		return Kind.NUMBER;
	}

	private boolean matches(String word) {
		if (this.literalLength != word.length()) {
			return false;
		}
		for (int i = 0; i < word.length(); i++) {
			if (this.literal[i] != word.charAt(i)) {
				return false;
			}
		}
		return true;
	}

	private void fail() {
		this.state = FAILED;
	}

}
