package io.windowlimiter.metering;

import java.util.Arrays;

/**
 * What the events of one stream share, learnt by {@link EventSkim} from events it read whole: their first bytes
 * up to the value of their first {@code delta} key (the <em>prefix</em>, around a number that differs from event
 * to event), and the bytes after that value to their blank line (the <em>end</em>, around a string that
 * differs). An event that has them is read from the delta's value alone. Ends that keep differing are learnt
 * again only after a back-off. Holds at most {@value #MAX_RETAINED_BYTES} bytes. Not thread-safe.
 */
final class EventShape {

	/** The longest prefix learnt: a chat completions chunk's is about 200 bytes. */
	static final int MAX_PREFIX_BYTES = 512;

	/** The longest end learnt: a chat completions chunk's is about 40 bytes. */
	static final int MAX_END_BYTES = 256;

	/** What this keeps at most: the prefix and the end its events share. */
	static final int MAX_RETAINED_BYTES = MAX_PREFIX_BYTES + MAX_END_BYTES;

	private static final int MAX_END_BACKOFF = 64;

	/** {@link #endAfter}: the bytes are not the known end. */
	static final int END_DIFFERS = -1;

	/** {@link #endAfter}: the bytes end before that is known, or a string runs over its line. */
	static final int END_NOT_YET = -2;

	private static final byte[] NO_BYTES = new byte[0];

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

	/** The prefix's bytes to the delta's value; 0 while none is known. */
	int valuePrefix() {
		return this.valuePrefix;
	}

	/** The prefix's bytes an event is compared with (see {@link #prefixLength}). */
	int prefixLength() {
		return this.prefixLength;
	}

	/** Where the data line's value starts in the prefix. */
	int prefixData() {
		return this.prefixData;
	}

	/** Of the last prefix compared: how much further on the event's bytes after the number hole are. */
	int shift() {
		return this.shift;
	}

	/** Whether an end is known: an event past the whole prefix is then compared with it. */
	boolean knowsEnd() {
		return this.endLength > 0;
	}

	/**
	 * Compares the event at {@code start} with the first {@code length} bytes of the prefix: -1 when they match,
	 * else the index in the prefix where they differ. When they first differ in a number of the prefix before the
	 * delta's value, that number becomes the prefix's hole (any number matches there) and they are compared again.
	 * Sets {@link #shift}.
	 */
	int mismatch(byte[] bytes, int start, int end, int length) {
		int mismatch = prefixMismatch(bytes, start, end, length);
		if (mismatch >= 0 && mismatch < this.valuePrefix && this.prefixHole < 0) {
			int hole = numberAround(mismatch);
			if (hole >= 0) {
				this.prefixHole = hole;
				this.prefixHoleEnd = JsonBytes.numberEnd(this.prefix, hole, this.valuePrefix);
				mismatch = prefixMismatch(bytes, start, end, length);
			}
		}
		return mismatch;
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
	 * The index after the known end when the bytes from {@code at} are those (around its hole, if it has one):
	 * else {@link #END_DIFFERS}, or {@link #END_NOT_YET} when the bytes end first.
	 */
	int endAfter(byte[] bytes, int at, int to) {
		return (this.endHole < 0) ? knownEnd(bytes, at, to) : endAroundHole(bytes, at, to, this.endHole, this.endHoleEnd);
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
	 * An event was read to the known end: the back-off starts over.
	 * @return whether the end holds {@code "finish_reason":null} (a choice that goes on)
	 */
	boolean endMet() {
		this.nextEndBackoff = 1;
		return this.endGoesOn;
	}

	/** An event with the prefix ended otherwise: the end is forgotten, and learnt again after a back-off. */
	void endDiffered() {
		this.endLength = 0;
		this.endHole = -1;
		this.prefixLength = this.valuePrefix;
		this.endBackoff = this.nextEndBackoff;
		this.nextEndBackoff = Math.min(2 * this.nextEndBackoff, MAX_END_BACKOFF);
	}

	/** Whether the end is not to be learnt from this event (one less to wait while backing off). */
	boolean backsOff() {
		if (this.endBackoff > 0) {
			this.endBackoff--;
			return true;
		}
		return false;
	}

	/**
	 * Keeps the bytes of an event read whole from its start to its first delta's value as the prefix, the end
	 * forgotten.
	 * @param length the bytes from {@code start} to the delta's value, at most {@value #MAX_PREFIX_BYTES}
	 * @param data where the data line's value starts, from {@code start}
	 * @param choicesOpen the index after the opening brace of the first element of the data's {@code choices},
	 * from {@code start}; -1 when the prefix does not reach one
	 */
	void learnPrefix(byte[] bytes, int start, int length, int data, int choicesOpen) {
		if (this.prefix.length < length) {
			this.prefix = new byte[Math.max(length, Math.min(2 * this.prefix.length, MAX_PREFIX_BYTES))];
		}
		System.arraycopy(bytes, start, this.prefix, 0, length);
		this.prefixHole = -1;
		this.valuePrefix = length;
		this.prefixLength = length;
		this.endLength = 0;
		this.prefixData = data;
		this.prefixChoicesOpen = choicesOpen;
	}

	/**
	 * Keeps the bytes of an event from {@code after} to its blank line's CR or LF as the end, unless longer than
	 * {@value #MAX_END_BYTES}; and the value's bytes before its text string, {@code extension} of them from
	 * {@code valueStart}, extend the prefix.
	 * @param deltaClose where the delta's value ends, from {@code after}
	 * @param goesOn whether the event was a choice that goes on
	 */
	void learnEnd(byte[] bytes, int after, int length, int deltaClose, boolean goesOn, int valueStart,
			int extension) {
		if (length > MAX_END_BYTES) {
			return;
		}
		this.endHole = -1;
		this.endDeltaClose = deltaClose;
		if (this.end.length < length) {
			this.end = new byte[Math.max(length, Math.min(2 * Math.max(this.end.length, 32), MAX_END_BYTES))];
		}
		System.arraycopy(bytes, after, this.end, 0, length);
		this.endLength = length;
		this.endGoesOn = goesOn;
		int full = this.valuePrefix + extension;
		if (this.prefix.length < full) {
			this.prefix = Arrays.copyOf(this.prefix, Math.max(full, Math.min(2 * this.prefix.length, MAX_PREFIX_BYTES)));
		}
		System.arraycopy(bytes, valueStart, this.prefix, this.valuePrefix, extension);
		this.prefixLength = full;
	}

	/**
	 * The first {@code length} bytes of an unfinished event are {@link #prefix} up to where its data's top-level
	 * {@code choices} array opens its first element: that event's choices are not empty.
	 */
	boolean opensChoices(byte[] head, int length) {
		int open = this.prefixChoicesOpen;
		return open > 0 && length >= open && Arrays.mismatch(head, 0, open, this.prefix, 0, open) < 0;
	}

}
