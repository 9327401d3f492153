package io.windowlimiter.metering;

import java.util.Arrays;

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
 * the bytes after it to their blank line: both are learnt from an event read whole ({@link #prefix},
 * {@link #end}), and an event that has them is read from the delta's value alone; or from the value's text
 * string alone, when that was all the text of the event that taught them ({@code {"content":"..."}}).
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

	/** The longest prefix learnt: a chat completions chunk's is about 200 bytes. */
	static final int MAX_PREFIX_BYTES = 512;

	/** The longest end learnt: a chat completions chunk's is about 40 bytes. */
	static final int MAX_END_BYTES = 256;

	private static final int MAX_END_BACKOFF = 64;

	/** {@link #readToKnownEnd}: the event was read. */
	private static final int KNOWN_END = 1;

	/** {@link #readToKnownEnd}: the event ends otherwise. */
	private static final int OTHER_END = -1;

	/** {@link #readToKnownEnd}: not known yet, or not for the cheap path to say. */
	private static final int UNDECIDED = 0;

	/** {@link #knownEnd}: the bytes are not the known end. */
	private static final int END_DIFFERS = -1;

	/** {@link #knownEnd}: the bytes end before that is known, or a string runs over its line. */
	private static final int END_NOT_YET = -2;

	/** What this keeps at most: the prefix and the end its events share. */
	static final int MAX_RETAINED_BYTES = MAX_PREFIX_BYTES + MAX_END_BYTES;

	/** Deeper deltas are left to the full scan. */
	private static final int MAX_DELTA_DEPTH = 16;

	private static final byte[] NO_BYTES = new byte[0];

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

	/**
	 * The bytes of the last event read whole, from its start to the value of its first {@code delta} key, when
	 * its one data line was its last line: the events of a stream mostly differ only from there on, so one
	 * that starts with these bytes is read from there (what they hold was read and found to hold no usage,
	 * error or text). While an {@link #end} is known, followed by the bytes of that value up to its text string
	 * (the {@code {"content":} of a chat chunk's delta), if it has one.
	 */
	private byte[] prefix = NO_BYTES;

	/** The prefix's bytes to the delta's value. */
	private int valuePrefix;

	/**
	 * The prefix's bytes an event is compared with: {@link #valuePrefix}, and while an end is known, the bytes of
	 * the value up to its text string too; then an event that has them all is read from that string.
	 */
	private int prefixLength;

	/** Where the data line's value starts in {@link #prefix}. */
	private int prefixData;

	/**
	 * In {@link #prefix}: the index after the first element's opening brace of the data's top-level
	 * {@code choices} array, or -1 when the prefix does not reach one.
	 */
	private int prefixChoicesOpen = -1;

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

	/**
	 * The bytes of the last event read whole, from after the value of its first delta key (or after that value's
	 * text string, when it was the only text the event had) to its blank line's CR or LF, when nothing after
	 * that value was counted: the events of a stream mostly end alike too, so one that starts with
	 * {@link #prefix}, has a well-formed delta value (or string) and goes on with these bytes is read without
	 * searching them (what they hold was read and found to hold no usage, error or text).
	 */
	private byte[] end = NO_BYTES;

	private int endLength;

	/** In {@link #end}: where the delta's value ends (the bytes before it are the value's, after its text). */
	private int endDeltaClose;

	/**
	 * In {@link #end}: the opening quote of a string value after the delta's that differs from event to event
	 * (OpenAI's {@code obfuscation}), so an event's end is matched around it; -1: none.
	 */
	private int endHole = -1;

	/** In {@link #end}: the index after that string. */
	private int endHoleEnd;

	/**
	 * In {@link #prefix}: the start of a number value that differs from event to event (the Responses API's
	 * {@code sequence_number}), so an event's prefix is matched around it; -1: none.
	 */
	private int prefixHole = -1;

	/** In {@link #prefix}: the index after that number. */
	private int prefixHoleEnd;

	/** Of the last prefix compared: how much further on the event's bytes after the number hole are. */
	private int shift;

	/**
	 * Events to read before an end is learnt again, after an event ended otherwise: doubling up to
	 * {@value #MAX_END_BACKOFF} while ends keep differing (OpenAI's {@code obfuscation} padding makes every
	 * chunk's end its own), so such a stream does not pay for learning ends it never meets again.
	 */
	private int endBackoff;

	private int nextEndBackoff = 1;

	/** {@link #end} holds {@code "finish_reason":null}: an event read to it is a choice that goes on. */
	private boolean endGoesOn;

	/** Bytes of the buffers this keeps for the prefix and the end (at most {@value #MAX_RETAINED_BYTES}). */
	int retainedBytes() {
		return this.prefix.length + this.end.length;
	}

	/**
	 * Reads the event starting at {@code start} (a line's first byte, not a line end); returns whether it
	 * could, and then {@link #blankLine}, {@link #textBytes} and {@link #done} tell what it held.
	 */
	boolean read(byte[] bytes, int start, int end) {
		this.choiceGoesOn = false;
		int valuePrefix = this.valuePrefix;
		int full = this.prefixLength;
		int compared = (end - start > full) ? full : valuePrefix;
		boolean prefixed = valuePrefix > 0 && end - start > valuePrefix;
		int mismatch = prefixed ? prefixMismatch(bytes, start, end, compared) : 0;
		if (prefixed && mismatch >= 0 && mismatch < valuePrefix && this.prefixHole < 0) {
			int hole = numberAround(mismatch);
			if (hole >= 0) {
				this.prefixHole = hole;
				this.prefixHoleEnd = JsonBytes.numberEnd(this.prefix, hole, valuePrefix);
				mismatch = prefixMismatch(bytes, start, end, compared);
			}
		}
		if (prefixed && (mismatch < 0 || mismatch >= valuePrefix)) {
			// the event's bytes past the prefix's number hole sit this much further on than the prefix's
			int shift = this.shift;
			int valueStart = start + valuePrefix + shift;
			int known = UNDECIDED;
			if (mismatch >= valuePrefix) {
				// the same value prefix, another way to the text string
				known = OTHER_END;
			}
			else if (compared == full && this.endLength > 0) {
				known = readToKnownEnd(bytes, start + full + shift, end);
			}
			if (known == KNOWN_END) {
				this.nextEndBackoff = 1;
				this.choiceGoesOn = this.endGoesOn;
				return true;
			}
			if (known == OTHER_END) {
				this.endLength = 0;
				this.endHole = -1;
				this.prefixLength = valuePrefix;
				this.endBackoff = this.nextEndBackoff;
				this.nextEndBackoff = Math.min(2 * this.nextEndBackoff, MAX_END_BACKOFF);
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
				if (!readData(bytes, start + this.prefixData, dataTo, valueStart)) {
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
	 * Compares the event at {@code start} with the first {@code length} bytes of {@link #prefix}, around its
	 * {@link #prefixHole} if it has one (there, any number); returns -1 when they match, else the index in the
	 * prefix where they differ (the hole's when the bytes end before the comparison can be made). Sets
	 * {@link #shift}.
	 */
	private int prefixMismatch(byte[] bytes, int start, int end, int length) {
		this.shift = 0;
		int hole = this.prefixHole;
		if (hole < 0 || hole >= length) {
			return Arrays.mismatch(bytes, start, start + length, this.prefix, 0, length);
		}
		int differs = Arrays.mismatch(bytes, start, start + hole, this.prefix, 0, hole);
		if (differs >= 0) {
			return differs;
		}
		int number = JsonBytes.numberEnd(bytes, start + hole, end);
		int holeEnd = this.prefixHoleEnd;
		int rest = length - holeEnd;
		if (number == start + hole || end - number < rest) {
			return hole;
		}
		this.shift = number - (start + holeEnd);
		differs = Arrays.mismatch(bytes, number, number + rest, this.prefix, holeEnd, length);
		return (differs < 0) ? -1 : holeEnd + differs;
	}

	/**
	 * In {@link #prefix}: the start of the number value (after a colon, in the data) that holds index {@code at}
	 * or ends just before it, followed by more of the prefix; else -1. The Responses API numbers its events
	 * ({@code sequence_number}) before their delta: with the number a hole, they share the rest of the prefix.
	 */
	private int numberAround(int at) {
		byte[] prefix = this.prefix;
		int from = at;
		while (from > this.prefixData && JsonBytes.isNumberByte(prefix[from - 1])) {
			from--;
		}
		if (from == at && !JsonBytes.isNumberByte(prefix[at])) {
			return -1;
		}
		if (!(prefix[from] == '-' || (prefix[from] >= '0' && prefix[from] <= '9'))
				|| JsonBytes.numberEnd(prefix, from, this.valuePrefix) >= this.valuePrefix) {
			return -1;
		}
		return JsonBytes.afterColon(prefix, this.prefixData, from) ? from : -1;
	}

	/**
	 * An event past {@link #prefix}: its delta value (or the value's text string) walked, then read whole
	 * ({@link #KNOWN_END}) when the bytes after it are {@link #end}; {@link #OTHER_END} when they differ;
	 * {@link #UNDECIDED} when it is not well-formed (not a string where the prefix expects one), runs over its
	 * line or the bytes end first. Only the first reads the event.
	 */
	private int readToKnownEnd(byte[] bytes, int valueStart, int end) {
		this.textBytes = 0;
		// walked up to the slice's end at most, it stops at a line end (no string, key or space crosses one): the
		// value lies on the data line
		int valueEnd;
		if (this.prefixLength == this.valuePrefix) {
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
		int eventEnd = (this.endHole < 0) ? knownEnd(bytes, valueEnd, end) : endAroundHole(bytes, valueEnd, end);
		if (eventEnd < 0) {
			return (eventEnd == END_DIFFERS) ? OTHER_END : UNDECIDED;
		}
		this.incomplete = false;
		this.blankLine = eventEnd - 1;
		this.done = false;
		return KNOWN_END;
	}

	/**
	 * The index after {@link #end} when the bytes from {@code at} are those; when they differ only in a string
	 * value after the delta (OpenAI's {@code obfuscation} padding), the same around that string, which becomes
	 * the end's {@link #endHole}. Else {@link #END_DIFFERS}, or {@link #END_NOT_YET} when the bytes end first.
	 */
	private int knownEnd(byte[] bytes, int at, int to) {
		int known = this.endLength;
		if (to - at < known) {
			return END_NOT_YET;
		}
		int differs = Arrays.mismatch(bytes, at, at + known, this.end, 0, known);
		if (differs < 0) {
			return at + known;
		}
		int hole = valueStringAround(differs);
		if (hole < 0) {
			return END_DIFFERS;
		}
		int holeEnd = JsonBytes.stringEnd(this.end, hole, known);
		int eventEnd = endAroundHole(bytes, at, to, hole, holeEnd);
		if (eventEnd >= 0) {
			this.endHole = hole;
			this.endHoleEnd = holeEnd;
		}
		return eventEnd;
	}

	private int endAroundHole(byte[] bytes, int at, int to) {
		return endAroundHole(bytes, at, to, this.endHole, this.endHoleEnd);
	}

	/**
	 * The index after {@link #end} when the bytes from {@code at} are its bytes before {@code hole}, a string,
	 * and its bytes from {@code holeEnd} on; else {@link #END_DIFFERS}, or {@link #END_NOT_YET} when the bytes
	 * end first or the string runs over its line (the full scan decides).
	 */
	private int endAroundHole(byte[] bytes, int at, int to, int hole, int holeEnd) {
		if (to - at <= hole) {
			return END_NOT_YET;
		}
		if (Arrays.mismatch(bytes, at, at + hole, this.end, 0, hole) >= 0 || bytes[at + hole] != '"') {
			return END_DIFFERS;
		}
		int stringEnd = JsonBytes.stringEnd(bytes, at + hole, to);
		int tail = this.endLength - holeEnd;
		if (stringEnd < 0 || to - stringEnd < tail) {
			return END_NOT_YET;
		}
		if (Arrays.mismatch(bytes, stringEnd, stringEnd + tail, this.end, holeEnd, this.endLength) >= 0) {
			return END_DIFFERS;
		}
		return stringEnd + tail;
	}

	/**
	 * In {@link #end}: the opening quote of the string that holds index {@code at}, when that string is a value
	 * (after a colon) past the delta's value, where no text is counted and no key can hide; else -1.
	 */
	private int valueStringAround(int at) {
		byte[] end = this.end;
		int i = this.endDeltaClose;
		while (i < at) {
			if (end[i] != '"') {
				i++;
				continue;
			}
			int after = JsonBytes.stringEnd(end, i, this.endLength);
			if (after < 0) {
				return -1;
			}
			if (at < after) {
				return (at > i && JsonBytes.afterColon(end, 0, i)) ? i : -1;
			}
			i = after;
		}
		return -1;
	}

	/**
	 * After an event that starts with {@link #valuePrefix} was read whole, its first delta's value at
	 * {@code valueStart}: keeps its bytes from after that value to its blank line as {@link #end}, when that was
	 * its only delta key. When the value holds a string that was all the event's text (a chat chunk's content),
	 * the end starts after that string instead, and the value's bytes before it extend the prefix: the next
	 * events are read from their text alone.
	 */
	private void learnEnd(byte[] bytes, int valueStart) {
		if (this.endBackoff > 0) {
			this.endBackoff--;
			return;
		}
		if (this.firstDeltaEnd < 0 || this.deltaKeys != 1) {
			return;
		}
		int after = this.firstDeltaEnd;
		int extension = 0;
		int text = this.firstText;
		if (text >= valueStart && this.firstTextEnd <= this.firstDeltaEnd
				&& this.textBytes == this.firstTextEnd - text - 2 && this.valuePrefix + text - valueStart <= MAX_PREFIX_BYTES) {
			after = this.firstTextEnd;
			extension = text - valueStart;
		}
		int length = this.blankLine + 1 - after;
		if (length > MAX_END_BYTES) {
			return;
		}
		this.endHole = -1;
		this.endDeltaClose = this.firstDeltaEnd - after;
		if (this.end.length < length) {
			this.end = new byte[Math.max(length, Math.min(2 * Math.max(this.end.length, 32), MAX_END_BYTES))];
		}
		System.arraycopy(bytes, after, this.end, 0, length);
		this.endLength = length;
		this.endGoesOn = this.choiceGoesOn;
		int full = this.valuePrefix + extension;
		if (this.prefix.length < full) {
			this.prefix = Arrays.copyOf(this.prefix, Math.max(full, Math.min(2 * this.prefix.length, MAX_PREFIX_BYTES)));
		}
		System.arraycopy(bytes, valueStart, this.prefix, this.valuePrefix, extension);
		this.prefixLength = full;
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
		if (this.firstDeltaValue >= 0 && !linesAfterData && prefix <= MAX_PREFIX_BYTES) {
			// the next events of the stream most often start with these very bytes
			if (this.prefix.length < prefix) {
				this.prefix = new byte[Math.max(prefix, Math.min(2 * this.prefix.length, MAX_PREFIX_BYTES))];
			}
			System.arraycopy(bytes, start, this.prefix, 0, prefix);
			this.prefixHole = -1;
			this.valuePrefix = prefix;
			this.prefixLength = prefix;
			this.endLength = 0;
			this.prefixData = dataFrom - start;
			int opened = choicesOpened(bytes, dataFrom, this.firstDeltaValue);
			this.prefixChoicesOpen = (opened < 0) ? -1 : opened - start;
			learnEnd(bytes, this.firstDeltaValue);
		}
		return true;
	}

	/**
	 * The first {@code length} bytes of an unfinished event are {@link #prefix} up to where its data's top-level
	 * {@code choices} array opens its first element: that event's choices are not empty.
	 */
	boolean opensChoices(byte[] head, int length) {
		int open = this.prefixChoicesOpen;
		return open > 0 && length >= open && Arrays.mismatch(head, 0, open, this.prefix, 0, open) < 0;
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
