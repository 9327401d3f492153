package io.windowlimiter.metering;

/**
 * The cheap path of {@link SseScanner}: reads one whole SSE event that lies in the slice at hand by byte
 * searches, without the JSON scan, when it cannot carry usage or an error. That is most events of a stream
 * (chat completions chunks, the Responses API's {@code response.output_text.delta}, Anthropic's
 * {@code content_block_delta}): what they add is their delta text, counted here by the same rule as
 * {@link UsageFigures} (a string keyed {@code delta}, and strings under its text keys), and OpenAI's
 * {@code [DONE]}.
 * <p>
 * It declines when the event is not whole in the bytes it is given (its blank line, or a CR's LF, not yet
 * seen: {@link #incomplete}, and {@link SseScanner} tries again with more), and, the event going through the
 * full scan, when in doubt: it has more or less than one data line, its data is not a
 * JSON object ({@code [DONE]} aside), the bytes {@code "usage"} or {@code "error"} appear in it other than
 * followed by {@code : null}, or its delta is not well-formed. A key is written with quotes JSON does not
 * escape, and a quote inside a string is escaped, so text a model writes (even {@code "usage":{...}}) never
 * shows those bytes, and no key the full scan would take is missed.
 * <p>
 * Events of a stream mostly share their first bytes up to the value of their first {@code delta} key, and
 * the bytes after it to their blank line: both are learnt from an event read whole (its {@link EventShape}),
 * and an event that has them is read from the delta's value alone; or from the value's text string alone, when
 * that was all the text of the event that taught them ({@code {"content":"..."}}).
 * <p>
 * What it does not check: that the rest of the data is valid JSON beyond starting with a brace and ending
 * with one, and the nesting depth of a delta; a malformed event or one whose delta sits deeper than
 * {@link JsonScanner#KEYED_DEPTH} levels adds text here that the full scan would not. Only the estimate of
 * a stream cut before its usage can differ, and only for an upstream that sends such events. Not
 * thread-safe.
 */
final class EventSkim {

	/** {@link #blankLineAfter}: the bytes end before the line after is known. */
	private static final int INCOMPLETE = -2;

	/** What this keeps at most: the prefix and the end its events share ({@link EventShape}). */
	static final int MAX_RETAINED_BYTES = EventShape.MAX_RETAINED_BYTES;

	/** {@link #readToKnownEnd}: the event was read. */
	private static final int KNOWN_END = 1;

	/** {@link #readToKnownEnd}: the event ends otherwise. */
	private static final int OTHER_END = -1;

	/** {@link #readToKnownEnd}: not known yet, or not for the cheap path to say. */
	private static final int UNDECIDED = 0;

	/** Deeper deltas are left to the full scan. */
	private static final int MAX_DELTA_DEPTH = 16;

	private static final byte[] DONE = { '[', 'D', 'O', 'N', 'E', ']' };

	private static final byte[] USAGE = { 'u', 's', 'a', 'g', 'e' };

	private static final byte[] ERROR = { 'e', 'r', 'r', 'o', 'r' };

	private static final byte[] DELTA = { 'd', 'e', 'l', 't', 'a' };

	private static final byte[] NULL = { 'n', 'u', 'l', 'l' };

	private static final byte[] CHOICES = JsonBytes.bytes("choices");

	private static final byte[] FINISH_NULL = JsonBytes.bytes("\"finish_reason\":null");

	/** Keys whose string values count as text inside a delta: {@link UsageFigures}'s, and delta itself. */
	private static final byte[][] TEXT_KEYS = { DELTA, JsonBytes.bytes("content"), JsonBytes.bytes("text"),
			JsonBytes.bytes("partial_json"), JsonBytes.bytes("thinking"), JsonBytes.bytes("arguments"),
			JsonBytes.bytes("refusal"), JsonBytes.bytes("reasoning_content"), JsonBytes.bytes("reasoning") };

	/** Of the last event read: the index of the byte that ends it (the blank line's CR or LF). */
	int blankLine;

	/** Of the last event read: bytes of delta text. */
	long textBytes;

	/** Of the last event read: its data was OpenAI's {@code [DONE]}. */
	boolean done;

	/**
	 * Of the last event read: it has {@code "finish_reason":null} after its first delta, a chat completions
	 * chunk of a choice that goes on. OpenAI sends the usage-only chunk after every choice finished, so it
	 * cannot be the next event.
	 */
	boolean choiceGoesOn;

	/** Of the last event declined: it was declined only because the slice ended before it did. */
	boolean incomplete;

	/** What the events of this stream share, learnt from those read whole. */
	private final EventShape shape = new EventShape();

	/** Of the data read last: where the value of its first delta key starts (-1: none). */
	private int firstDeltaValue = -1;

	/** Of the data read last: the index after the value of its first delta key (-1: none). */
	private int firstDeltaEnd = -1;

	/** Of the data read last: how many delta keys it had. */
	private int deltaKeys;

	/** Of the data read last: where its first counted string starts (its opening quote; -1: none). */
	private int firstText = -1;

	/** Of the data read last: the index after its first counted string. */
	private int firstTextEnd = -1;

	/** Bytes of the buffers this keeps for the prefix and the end (at most {@value #MAX_RETAINED_BYTES}). */
	int retainedBytes() {
		return this.shape.retainedBytes();
	}

	/**
	 * Reads the event starting at {@code start} (a line's first byte, not a line end); returns whether it
	 * could, and then {@link #blankLine}, {@link #textBytes} and {@link #done} tell what it held.
	 */
	boolean read(byte[] bytes, int start, int end) {
		this.choiceGoesOn = false;
		EventShape shape = this.shape;
		int valuePrefix = shape.valuePrefix();
		int full = shape.prefixLength();
		int compared = (end - start > full) ? full : valuePrefix;
		boolean prefixed = valuePrefix > 0 && end - start > valuePrefix;
		int mismatch = prefixed ? shape.mismatch(bytes, start, end, compared) : 0;
		if (prefixed && (mismatch < 0 || mismatch >= valuePrefix)) {
			// the event's bytes past the prefix's number hole sit this much further on than the prefix's
			int shift = shape.shift();
			int valueStart = start + valuePrefix + shift;
			int known = UNDECIDED;
			if (mismatch >= valuePrefix) {
				// the same value prefix, another way to the text string
				known = OTHER_END;
			}
			else if (compared == full && shape.knowsEnd()) {
				known = readToKnownEnd(bytes, start + full + shift, end);
			}
			if (known == KNOWN_END) {
				this.choiceGoesOn = shape.endMet();
				return true;
			}
			if (known == OTHER_END) {
				shape.endDiffered();
			}
			int dataTo = JsonBytes.lineEnd(bytes, valueStart, end);
			int blank = blankLineAfter(bytes, dataTo, end);
			if (blank == INCOMPLETE) {
				this.incomplete = true;
				return false;
			}
			if (blank >= 0) {
				this.incomplete = false;
				this.blankLine = blank;
				this.textBytes = 0;
				this.done = false;
				if (!readData(bytes, start + shape.prefixData(), dataTo, valueStart)) {
					return false;
				}
				this.choiceGoesOn = goesOn(bytes, dataTo);
				learnEnd(bytes, valueStart);
				return true;
			}
		}
		return readWhole(bytes, start, end);
	}

	/**
	 * An event past the shape's prefix: its delta value (or the value's text string) walked, then read whole
	 * ({@link #KNOWN_END}) when the bytes after it are the shape's end; {@link #OTHER_END} when they differ;
	 * {@link #UNDECIDED} when it is not well-formed (not a string where the prefix expects one), runs over its
	 * line or the bytes end first. Only the first reads the event.
	 */
	private int readToKnownEnd(byte[] bytes, int valueStart, int end) {
		this.textBytes = 0;
		// walked up to the slice's end at most, it stops at a line end (no string, key or space crosses one): the
		// value lies on the data line
		int valueEnd;
		if (this.shape.prefixLength() == this.shape.valuePrefix()) {
			valueEnd = value(bytes, valueStart, end, true, 0);
		}
		else if (valueStart < end && bytes[valueStart] == '"') {
			valueEnd = JsonBytes.stringEnd(bytes, valueStart, end);
			this.textBytes = Math.max(0, valueEnd - valueStart - 2);
		}
		else {
			valueEnd = -1;
		}
		if (valueEnd < 0) {
			return UNDECIDED;
		}
		int eventEnd = this.shape.endAfter(bytes, valueEnd, end);
		if (eventEnd < 0) {
			return (eventEnd == EventShape.END_DIFFERS) ? OTHER_END : UNDECIDED;
		}
		this.incomplete = false;
		this.blankLine = eventEnd - 1;
		this.done = false;
		return KNOWN_END;
	}

	/**
	 * After an event that starts with the shape's prefix was read whole, its first delta's value at
	 * {@code valueStart}: keeps its bytes from after that value to its blank line as the shape's end, when that was
	 * its only delta key. When the value holds a string that was all the event's text (a chat chunk's content),
	 * the end starts after that string instead, and the value's bytes before it extend the prefix: the next
	 * events are read from their text alone.
	 */
	private void learnEnd(byte[] bytes, int valueStart) {
		if (this.shape.backsOff()) {
			return;
		}
		if (this.firstDeltaEnd < 0 || this.deltaKeys != 1) {
			return;
		}
		int after = this.firstDeltaEnd;
		int extension = 0;
		int text = this.firstText;
		if (text >= valueStart && this.firstTextEnd <= this.firstDeltaEnd
				&& this.textBytes == this.firstTextEnd - text - 2
				&& this.shape.valuePrefix() + text - valueStart <= EventShape.MAX_PREFIX_BYTES) {
			after = this.firstTextEnd;
			extension = text - valueStart;
		}
		this.shape.learnEnd(bytes, after, this.blankLine + 1 - after, this.firstDeltaEnd - after, this.choiceGoesOn,
				valueStart, extension);
	}

	/** Of data just read: {@code "finish_reason":null} follows its first delta's value (before {@code to}). */
	private boolean goesOn(byte[] bytes, int to) {
		int from = this.firstDeltaEnd;
		if (from < 0) {
			return false;
		}
		for (int i = from; i + FINISH_NULL.length <= to; i++) {
			if (bytes[i] == '"' && JsonBytes.startsWith(bytes, i, to, FINISH_NULL)) {
				return true;
			}
		}
		return false;
	}

	/** {@link #read} without the prefix: each line searched; the prefix learnt from an event read. */
	private boolean readWhole(byte[] bytes, int start, int end) {
		this.incomplete = true;
		int dataFrom = -1;
		int dataTo = -1;
		boolean linesAfterData = false;
		int line = start;
		while (true) {
			int eol = JsonBytes.lineEnd(bytes, line, end);
			if (eol == end) {
				return false;
			}
			linesAfterData |= dataFrom >= 0;
			if (eol - line >= 4 && bytes[line] == 'd' && bytes[line + 1] == 'a' && bytes[line + 2] == 't'
					&& bytes[line + 3] == 'a') {
				if (eol - line == 4 || bytes[line + 4] == ':') {
					if (dataFrom >= 0 || eol - line == 4) {
						this.incomplete = false;
						return false;
					}
					dataFrom = line + 5;
					if (dataFrom < eol && bytes[dataFrom] == ' ') {
						dataFrom++;
					}
					dataTo = eol;
				}
			}
			int blank = blankLineAfter(bytes, eol, end);
			if (blank == INCOMPLETE) {
				return false;
			}
			if (blank >= 0) {
				this.blankLine = blank;
				break;
			}
			line = (bytes[eol] == '\r' && bytes[eol + 1] == '\n') ? eol + 2 : eol + 1;
		}
		this.incomplete = false;
		this.textBytes = 0;
		this.done = false;
		if (dataFrom < 0) {
			return true;
		}
		if (dataTo - dataFrom == DONE.length && JsonBytes.startsWith(bytes, dataFrom, dataTo, DONE)) {
			this.done = true;
			return true;
		}
		if (!readData(bytes, dataFrom, dataTo, -1)) {
			return false;
		}
		this.choiceGoesOn = goesOn(bytes, dataTo);
		int prefix = this.firstDeltaValue - start;
		if (this.firstDeltaValue >= 0 && !linesAfterData && prefix <= EventShape.MAX_PREFIX_BYTES) {
			// the next events of the stream most often start with these very bytes
			int opened = choicesOpened(bytes, dataFrom, this.firstDeltaValue);
			this.shape.learnPrefix(bytes, start, prefix, dataFrom - start, (opened < 0) ? -1 : opened - start);
			learnEnd(bytes, this.firstDeltaValue);
		}
		return true;
	}

	/**
	 * The first {@code length} bytes of an unfinished event are the shape's prefix up to where its data's top-level
	 * {@code choices} array opens its first element: that event's choices are not empty.
	 */
	boolean opensChoices(byte[] head, int length) {
		return this.shape.opensChoices(head, length);
	}

	/**
	 * In a JSON object from {@code from} (its opening brace) to {@code to}: the index after the opening brace of
	 * the first element of its {@code choices} key's array, or -1 when that is not in the bytes.
	 */
	private static int choicesOpened(byte[] bytes, int from, int to) {
		int depth = 0;
		for (int i = from; i < to; i++) {
			byte b = bytes[i];
			if (b == '"') {
				int end = JsonBytes.stringEnd(bytes, i, to);
				if (end < 0) {
					return -1;
				}
				if (depth == 1 && JsonBytes.isKey(bytes, i + 1, end - 1, CHOICES)) {
					int colon = JsonBytes.skipSpace(bytes, end, to);
					int array = (colon < to && bytes[colon] == ':') ? JsonBytes.skipSpace(bytes, colon + 1, to) : to;
					int element = (array < to && bytes[array] == '[') ? JsonBytes.skipSpace(bytes, array + 1, to) : to;
					return (element < to && bytes[element] == '{') ? element + 1 : -1;
				}
				i = end - 1;
			}
			else if (b == '{' || b == '[') {
				depth++;
			}
			else if (b == '}' || b == ']') {
				depth--;
			}
		}
		return -1;
	}

	/**
	 * The index of the blank line that follows the line ending at {@code eol} (its CR or LF), {@link #INCOMPLETE}
	 * when the bytes end before that is known, or -1 when another line follows.
	 */
	private static int blankLineAfter(byte[] bytes, int eol, int end) {
		if (eol == end) {
			return INCOMPLETE;
		}
		int next = eol + 1;
		if (bytes[eol] == '\r') {
			if (next == end) {
				return INCOMPLETE;
			}
			if (bytes[next] == '\n') {
				next++;
			}
		}
		if (next == end) {
			return INCOMPLETE;
		}
		return (bytes[next] == '\n' || bytes[next] == '\r') ? next : -1;
	}

	/**
	 * One data line's value: a JSON object without usage or error, its delta text counted. From its start, or,
	 * when {@code firstValue} is not -1, from the value of its first delta key (what comes before it is a
	 * prefix read before).
	 */
	private boolean readData(byte[] bytes, int from, int to, int firstValue) {
		int first = JsonBytes.skipSpace(bytes, from, to);
		int last = to - 1;
		while (last > first && JsonBytes.isSpace(bytes[last])) {
			last--;
		}
		if (first >= to || bytes[first] != '{' || bytes[last] != '}') {
			return false;
		}
		int i = first;
		this.firstDeltaValue = firstValue;
		this.firstDeltaEnd = -1;
		this.deltaKeys = 0;
		this.firstText = -1;
		if (firstValue >= 0) {
			i = value(bytes, firstValue, to, true, 0);
			if (i < 0) {
				return false;
			}
			this.firstDeltaEnd = i;
			this.deltaKeys = 1;
		}
		while (true) {
			// a five-letter word in quotes: the only place these keys can be
			i = JsonBytes.quotedWord(bytes, i, to);
			if (i < 0) {
				return true;
			}
			int after = i + 6;
			if (JsonBytes.startsWith(bytes, i + 1, to, USAGE) || JsonBytes.startsWith(bytes, i + 1, to, ERROR)) {
				if (!followedByNull(bytes, after + 1, to)) {
					return false;
				}
			}
			else if (JsonBytes.startsWith(bytes, i + 1, to, DELTA) && !JsonBytes.escaped(bytes, from, i)) {
				int colon = JsonBytes.skipSpace(bytes, after + 1, to);
				if (colon < to && bytes[colon] == ':') {
					int valueStart = JsonBytes.skipSpace(bytes, colon + 1, to);
					if (this.firstDeltaValue < 0) {
						this.firstDeltaValue = valueStart;
					}
					int valueEnd = value(bytes, valueStart, to, true, 0);
					if (valueEnd < 0) {
						return false;
					}
					if (this.deltaKeys++ == 0) {
						this.firstDeltaEnd = valueEnd;
					}
					i = valueEnd;
					continue;
				}
			}
			i++;
		}
	}

	/**
	 * Walks one JSON value inside a delta, from its first byte; counts it when it is a string and
	 * {@code counted}, and the strings under text keys of the objects in it. Returns the index after it, or
	 * -1 when it is not well-formed (or too deep, or holds usage or error).
	 */
	private int value(byte[] bytes, int i, int to, boolean counted, int depth) {
		if (i >= to || depth > MAX_DELTA_DEPTH) {
			return -1;
		}
		byte b = bytes[i];
		if (b == '"') {
			int end = JsonBytes.stringEnd(bytes, i, to);
			if (end > 0 && counted) {
				this.textBytes += end - i - 2;
				if (this.firstText < 0) {
					this.firstText = i;
					this.firstTextEnd = end;
				}
			}
			return end;
		}
		if (b == '{') {
			i = JsonBytes.skipSpace(bytes, i + 1, to);
			if (i < to && bytes[i] == '}') {
				return i + 1;
			}
			while (true) {
				if (i >= to || bytes[i] != '"') {
					return -1;
				}
				int keyEnd = JsonBytes.stringEnd(bytes, i, to);
				if (keyEnd < 0 || JsonBytes.isKey(bytes, i + 1, keyEnd - 1, USAGE)
						|| JsonBytes.isKey(bytes, i + 1, keyEnd - 1, ERROR)) {
					return -1;
				}
				boolean text = isTextKey(bytes, i + 1, keyEnd - 1);
				i = JsonBytes.skipSpace(bytes, keyEnd, to);
				if (i >= to || bytes[i] != ':') {
					return -1;
				}
				i = value(bytes, JsonBytes.skipSpace(bytes, i + 1, to), to, text, depth + 1);
				if (i < 0) {
					return -1;
				}
				i = JsonBytes.skipSpace(bytes, i, to);
				if (i < to && bytes[i] == '}') {
					return i + 1;
				}
				if (i >= to || bytes[i] != ',') {
					return -1;
				}
				i = JsonBytes.skipSpace(bytes, i + 1, to);
			}
		}
		if (b == '[') {
			i = JsonBytes.skipSpace(bytes, i + 1, to);
			if (i < to && bytes[i] == ']') {
				return i + 1;
			}
			while (true) {
				i = value(bytes, i, to, false, depth + 1);
				if (i < 0) {
					return -1;
				}
				i = JsonBytes.skipSpace(bytes, i, to);
				if (i < to && bytes[i] == ']') {
					return i + 1;
				}
				if (i >= to || bytes[i] != ',') {
					return -1;
				}
				i = JsonBytes.skipSpace(bytes, i + 1, to);
			}
		}
		int end = i;
		while (end < to && JsonBytes.isLiteral(bytes[end])) {
			end++;
		}
		return end > i ? end : -1;
	}

	private static boolean followedByNull(byte[] bytes, int i, int to) {
		i = JsonBytes.skipSpace(bytes, i, to);
		if (i >= to || bytes[i] != ':') {
			return false;
		}
		i = JsonBytes.skipSpace(bytes, i + 1, to);
		return JsonBytes.startsWith(bytes, i, to, NULL)
				&& (i + NULL.length == to || !JsonBytes.isLiteral(bytes[i + NULL.length]));
	}

	private static boolean isTextKey(byte[] bytes, int from, int to) {
		for (byte[] key : TEXT_KEYS) {
			if (JsonBytes.isKey(bytes, from, to, key)) {
				return true;
			}
		}
		return false;
	}

}
