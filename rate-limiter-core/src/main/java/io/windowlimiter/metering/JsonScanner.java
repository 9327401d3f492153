package io.windowlimiter.metering;

import org.jspecify.annotations.Nullable;

/**
 * A JSON scanner fed a document in slices of any size that keeps no copy of it: it follows the nesting, keeps
 * the keys of the first {@value #KEYED_DEPTH} levels and tells its {@link Listener} of every value with the
 * path to it. String values are skipped, only their length is known; so its memory is fixed (about 1 KB)
 * whatever the document's length, and one over-long string or number costs nothing.
 * <p>
 * Keys are kept as JSON decodes them, in UTF-8: <code>"str&#92;u0065am"</code> is {@code stream}, as every upstream's
 * decoder reads it (<code>&#92;uXXXX</code> escapes, surrogate pairs joined, a lone surrogate kept as its three bytes). A
 * key without a backslash is copied as it is, a run of bytes at a time; only a backslash takes the byte-by-byte
 * path. An escape JSON does not allow in a key fails the document.
 * <p>
 * No UTF-8 decoding is needed: every byte of a multi-byte character is {@code >= 0x80}, never a structural
 * character, so a slice may end anywhere, inside a character or an escape included. Not thread-safe.
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

	/** What {@link #wholeNumber()} answers for a negative whole number. */
	static final long NEGATIVE = -1;

	/** What {@link #wholeNumber()} answers for a number that is not written as a whole one: a fraction, an exponent. */
	static final long NOT_WHOLE = -2;

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

	// where a key's escape stands: none, after its backslash, in its four hex digits
	private static final int KEY_PLAIN = 0;

	private static final int KEY_BACKSLASH = 1;

	private static final int KEY_HEX = 2;

	private final Listener listener;

	private final boolean[] isArray = new boolean[MAX_DEPTH + 1];

	private final int[] size = new int[MAX_DEPTH + 1];

	private final byte[][] keys = new byte[KEYED_DEPTH + 1][MAX_KEY];

	/** Length of the key kept at each level, -1 when it matches nothing (too long, escaped, none yet). */
	private final int[] keyLength = new int[KEYED_DEPTH + 1];

	private final byte[] literal = new byte[MAX_LITERAL];

	private int literalLength;

	/** A byte past the first {@value #MAX_LITERAL} of the literal was not a digit. */
	private boolean literalOddBeyond;

	private boolean escaped;

	private int keyEscape;

	private int hexDigits;

	private int hexValue;

	/** A high surrogate decoded in a key, waiting for its low half; -1 when none. */
	private int pendingHigh = -1;

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
		this.keyEscape = KEY_PLAIN;
		this.pendingHigh = -1;
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

	/**
	 * Whether the key at {@code level} would be taken for {@code name} (lower-case ASCII) by a decoder that matches
	 * field names whatever their case: Go's {@code encoding/json} does, and folds {@code K} (U+212A) to {@code k},
	 * {@code ſ} (U+017F) to {@code s}, {@code İ} (U+0130) and {@code ı} (U+0131) to {@code i}. The exact name is
	 * one such key.
	 */
	boolean levelFolds(int level, String name) {
		if (level > KEYED_DEPTH || level > this.depth || this.isArray[level]) {
			return false;
		}
		int length = this.keyLength[level];
		byte[] kept = this.keys[level];
		int i = 0;
		for (int j = 0; j < name.length(); j++) {
			if (i >= length) {
				return false;
			}
			int b = kept[i] & 0xFF;
			char folded;
			if (b < 0x80) {
				folded = (char) ((b >= 'A' && b <= 'Z') ? b + ('a' - 'A') : b);
				i++;
			}
			else if (i + 1 < length && b == 0xC5 && (kept[i + 1] & 0xFF) == 0xBF) {
				folded = 's';
				i += 2;
			}
			else if (i + 1 < length && b == 0xC4 && ((kept[i + 1] & 0xFF) == 0xB0 || (kept[i + 1] & 0xFF) == 0xB1)) {
				folded = 'i';
				i += 2;
			}
			else if (i + 2 < length && b == 0xE2 && (kept[i + 1] & 0xFF) == 0x84 && (kept[i + 2] & 0xFF) == 0xAA) {
				folded = 'k';
				i += 3;
			}
			else {
				return false;
			}
			if (folded != name.charAt(j)) {
				return false;
			}
		}
		return i == length;
	}

	/** The key kept at {@code level}, decoded (for tests); null for an array or a key that matches nothing. */
	@Nullable String levelKey(int level) {
		if (level > KEYED_DEPTH || level > this.depth || this.isArray[level] || this.keyLength[level] < 0) {
			return null;
		}
		return new String(this.keys[level], 0, this.keyLength[level], java.nio.charset.StandardCharsets.UTF_8);
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

	/**
	 * The number just reported read as a count, as an upstream reads an integer field: its value when it is
	 * written as a whole number ({@code -0} is 0), {@link Long#MAX_VALUE} when that is more than a long holds;
	 * {@link #NEGATIVE} for a negative whole number; {@link #NOT_WHOLE} for any other ({@code 1e3},
	 * {@code 1000.0}).
	 */
	long wholeNumber() {
		int length = this.literalLength;
		int kept = Math.min(length, MAX_LITERAL);
		boolean negative = this.literal[0] == '-';
		int from = negative ? 1 : 0;
		if (from >= length || (length > MAX_LITERAL && this.literalOddBeyond)) {
			return NOT_WHOLE;
		}
		long value = 0;
		boolean huge = length > MAX_LITERAL;
		for (int i = from; i < kept; i++) {
			int digit = this.literal[i] - '0';
			if (digit < 0 || digit > 9) {
				return NOT_WHOLE;
			}
			if (value > (Long.MAX_VALUE - digit) / 10) {
				huge = true;
			}
			else {
				value = value * 10 + digit;
			}
		}
		if (negative) {
			return (value == 0 && !huge) ? 0 : NEGATIVE;
		}
		return huge ? Long.MAX_VALUE : value;
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
			if (this.state == IN_KEY && this.keyEscape == KEY_PLAIN) {
				int stop = i;
				while (stop < end && bytes[stop] != '"' && bytes[stop] != '\\') {
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
					else if (b < '0' || b > '9') {
						this.literalOddBeyond = true;
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

	/** A key's byte off the fast path: its closing quote, or a backslash and what follows it. */
	private void keyByte(byte b) {
		if (this.keyEscape == KEY_BACKSLASH) {
			escapedKeyByte(b);
		}
		else if (this.keyEscape == KEY_HEX) {
			hexKeyByte(b);
		}
		else if (b == '"') {
			keepPendingHigh();
			this.state = COLON;
		}
		else if (b == '\\') {
			this.keyEscape = KEY_BACKSLASH;
		}
		else {
			keepPendingHigh();
			keep(b);
		}
	}

	private void escapedKeyByte(byte b) {
		if (b == 'u') {
			this.keyEscape = KEY_HEX;
			this.hexDigits = 0;
			this.hexValue = 0;
			return;
		}
		this.keyEscape = KEY_PLAIN;
		int decoded = switch (b) {
			case '"', '\\', '/' -> b;
			case 'b' -> '\b';
			case 'f' -> '\f';
			case 'n' -> '\n';
			case 'r' -> '\r';
			case 't' -> '\t';
			default -> -1;
		};
		if (decoded < 0) {
			fail();
			return;
		}
		keepPendingHigh();
		keep((byte) decoded);
	}

	private void hexKeyByte(byte b) {
		int digit = (b >= '0' && b <= '9') ? b - '0'
				: (b >= 'a' && b <= 'f') ? b - 'a' + 10 : (b >= 'A' && b <= 'F') ? b - 'A' + 10 : -1;
		if (digit < 0) {
			fail();
			return;
		}
		this.hexValue = (this.hexValue << 4) | digit;
		if (++this.hexDigits < 4) {
			return;
		}
		this.keyEscape = KEY_PLAIN;
		int unit = this.hexValue;
		if (this.pendingHigh >= 0 && unit >= 0xDC00 && unit <= 0xDFFF) {
			keepCodePoint(0x10000 + ((this.pendingHigh - 0xD800) << 10) + (unit - 0xDC00));
			this.pendingHigh = -1;
			return;
		}
		keepPendingHigh();
		if (unit >= 0xD800 && unit <= 0xDBFF) {
			this.pendingHigh = unit;
		}
		else {
			keepCodePoint(unit);
		}
	}

	/** A high surrogate not followed by its low half is kept alone, as its three bytes (as Python keeps it). */
	private void keepPendingHigh() {
		if (this.pendingHigh >= 0) {
			int high = this.pendingHigh;
			this.pendingHigh = -1;
			keepCodePoint(high);
		}
	}

	private void keepCodePoint(int codePoint) {
		if (codePoint < 0x80) {
			keep((byte) codePoint);
		}
		else if (codePoint < 0x800) {
			keep((byte) (0xC0 | (codePoint >> 6)));
			keep((byte) (0x80 | (codePoint & 0x3F)));
		}
		else if (codePoint < 0x10000) {
			keep((byte) (0xE0 | (codePoint >> 12)));
			keep((byte) (0x80 | ((codePoint >> 6) & 0x3F)));
			keep((byte) (0x80 | (codePoint & 0x3F)));
		}
		else {
			keep((byte) (0xF0 | (codePoint >> 18)));
			keep((byte) (0x80 | ((codePoint >> 12) & 0x3F)));
			keep((byte) (0x80 | ((codePoint >> 6) & 0x3F)));
			keep((byte) (0x80 | (codePoint & 0x3F)));
		}
	}

	/** One decoded byte of the key at this level, kept while the key is short enough to match anything. */
	private void keep(byte b) {
		int level = this.depth;
		if (level > KEYED_DEPTH || this.keyLength[level] < 0) {
			return;
		}
		if (this.keyLength[level] == MAX_KEY) {
			this.keyLength[level] = -1;
		}
		else {
			this.keys[level][this.keyLength[level]++] = b;
		}
	}

	/** A run of plain key bytes (no quote, no backslash). */
	private void keyBytes(byte[] bytes, int from, int count) {
		keepPendingHigh();
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
					this.literalOddBeyond = false;
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
