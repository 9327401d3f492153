package io.windowlimiter.metering;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Byte searches in the text of an event stream and its JSON, on arrays: what {@link EventSkim} and
 * {@link JsonScanner} look for, a byte or eight at a time.
 */
final class JsonBytes {

	private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class,
			ByteOrder.LITTLE_ENDIAN);

	private static final long ONES = 0x0101010101010101L;

	private static final long LOWS = 0x7F7F7F7F7F7F7F7FL;

	private static final long LFS = ONES * '\n';

	private static final long CRS = ONES * '\r';

	private static final long QUOTES = ONES * '"';

	/** The bytes that stop {@link #stringEnd}: its quote, an escape, a line end. */
	private static final boolean[] STRING_STOPS = new boolean[256];

	static {
		for (char stop : new char[] { '"', '\\', '\n', '\r' }) {
			STRING_STOPS[stop] = true;
		}
	}

	/**
	 * The text of a JSON string's contents, {@code bytes[from, to)} between its quotes, decoded as JSON decodes it:
	 * UTF-8, escapes ({@code \\u0065} is {@code e}) included. The string is one the scanner read whole, so its
	 * escapes are well formed.
	 */
	static String decodeString(byte[] bytes, int from, int to) {
		int escape = from;
		while (escape < to && bytes[escape] != '\\') {
			escape++;
		}
		if (escape == to) {
			return new String(bytes, from, to - from, StandardCharsets.UTF_8);
		}
		StringBuilder text = new StringBuilder(to - from);
		int run = from;
		int i = escape;
		while (i < to) {
			if (bytes[i] != '\\') {
				i++;
				continue;
			}
			text.append(new String(bytes, run, i - run, StandardCharsets.UTF_8));
			byte escaped = bytes[i + 1];
			switch (escaped) {
				case 'b' -> text.append('\b');
				case 'f' -> text.append('\f');
				case 'n' -> text.append('\n');
				case 'r' -> text.append('\r');
				case 't' -> text.append('\t');
				case 'u' -> {
					text.append((char) Integer.parseInt(new String(bytes, i + 2, 4, StandardCharsets.US_ASCII), 16));
					i += 4;
				}
				default -> text.append((char) escaped);
			}
			i += 2;
			run = i;
		}
		return text.append(new String(bytes, run, to - run, StandardCharsets.UTF_8)).toString();
	}

	/** A colon comes before {@code at}, spaces and tabs aside, not before {@code from}: {@code at} starts a value. */
	static boolean afterColon(byte[] bytes, int from, int at) {
		int before = at - 1;
		while (before >= from && (bytes[before] == ' ' || bytes[before] == '\t')) {
			before--;
		}
		return before >= from && bytes[before] == ':';
	}

	/** The index after the bytes of a number from {@code i}, at most {@code to}. */
	static int numberEnd(byte[] bytes, int i, int to) {
		while (i < to && isNumberByte(bytes[i])) {
			i++;
		}
		return i;
	}

	static boolean isNumberByte(byte b) {
		return (b >= '0' && b <= '9') || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E';
	}

	/** The first CR or LF from {@code i}, else {@code to}: eight bytes a step, the bulk of the work. */
	static int lineEnd(byte[] bytes, int i, int to) {
		for (; i + Long.BYTES <= to; i += Long.BYTES) {
			long word = (long) LONGS.get(bytes, i);
			long found = zeroBytes(word ^ LFS) | zeroBytes(word ^ CRS);
			if (found != 0) {
				return i + (Long.numberOfTrailingZeros(found) >>> 3);
			}
		}
		while (i < to && bytes[i] != '\n' && bytes[i] != '\r') {
			i++;
		}
		return i;
	}

	/**
	 * The first index from {@code i} holding a double quote with another six bytes on, as around a word of five
	 * letters, else -1. Stopping at every quote would stop some twenty times in a chat chunk; this stops
	 * about three.
	 */
	static int quotedWord(byte[] bytes, int i, int to) {
		for (; i + 6 + Long.BYTES <= to; i += Long.BYTES) {
			long found = zeroBytes((long) LONGS.get(bytes, i) ^ QUOTES)
					& zeroBytes((long) LONGS.get(bytes, i + 6) ^ QUOTES);
			if (found != 0) {
				return i + (Long.numberOfTrailingZeros(found) >>> 3);
			}
		}
		for (; i + 6 < to; i++) {
			if (bytes[i] == '"' && bytes[i + 6] == '"') {
				return i;
			}
		}
		return -1;
	}

	/** The high bit of each zero byte of {@code word}, and no other bit. */
	static long zeroBytes(long word) {
		long low = (word & LOWS) + LOWS;
		return ~(low | word | LOWS);
	}

	/**
	 * The index after the string whose opening quote is at {@code quote}, or -1 if it does not end here or a
	 * line ends in it (JSON strings hold no raw CR or LF): so a value walked from its start stays on its line.
	 * Byte by byte: the strings of a delta are mostly a few bytes, too short for eight at a time to pay.
	 */
	static int stringEnd(byte[] bytes, int quote, int to) {
		for (int i = quote + 1; i < to; i++) {
			byte b = bytes[i];
			if (STRING_STOPS[b & 0xFF]) {
				if (b == '"') {
					return i + 1;
				}
				// a backslash escapes the next byte, unless that ends the line
				if (b != '\\' || i + 1 >= to || bytes[i + 1] == '\n' || bytes[i + 1] == '\r') {
					return -1;
				}
				i++;
			}
		}
		return -1;
	}

	/** The quote at {@code quote} is escaped: an odd number of backslashes before it. */
	static boolean escaped(byte[] bytes, int from, int quote) {
		int backslashes = 0;
		for (int i = quote - 1; i >= from && bytes[i] == '\\'; i--) {
			backslashes++;
		}
		return (backslashes & 1) == 1;
	}

	static boolean isKey(byte[] bytes, int from, int to, byte[] key) {
		return to - from == key.length && startsWith(bytes, from, to, key);
	}

	static boolean startsWith(byte[] bytes, int from, int to, byte[] word) {
		if (to - from < word.length) {
			return false;
		}
		for (int k = 0; k < word.length; k++) {
			if (bytes[from + k] != word[k]) {
				return false;
			}
		}
		return true;
	}

	/** Spaces and tabs only: a line end is not skipped, so a value walked from its start stays on its line. */
	static int skipSpace(byte[] bytes, int i, int to) {
		while (i < to && (bytes[i] == ' ' || bytes[i] == '\t')) {
			i++;
		}
		return i;
	}

	static boolean isSpace(byte b) {
		return b == ' ' || b == '\t' || b == '\n' || b == '\r';
	}

	static boolean isLiteral(byte b) {
		return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '-' || b == '+'
				|| b == '.';
	}

	static byte[] bytes(String ascii) {
		return ascii.getBytes(StandardCharsets.US_ASCII);
	}

	private JsonBytes() {
	}

}
