package io.windowlimiter.metering;

/**
 * How a request body starts, told from its first bytes only: whether it is a JSON object the gateway must read
 * whole, and whether an upstream could read it as a JSON object the gateway does not see. Python's
 * {@code json.loads} takes bytes in UTF-16 or UTF-32 (told by a byte order mark, or by zero bytes first) and
 * UTF-8 after a byte order mark, as Node's body parsers strip one; the gateway's scanner reads UTF-8 alone.
 */
final class BodyEncoding {

	private BodyEncoding() {
	}

	/** The first byte that is not JSON whitespace is an object's opening brace. */
	static boolean startsAsObject(byte[] body) {
		return firstUnit(body, 0, 1, false) == '{';
	}

	/**
	 * A JSON object in another encoding than plain UTF-8, as Python's {@code json.detect_encoding} tells it: after a
	 * byte order mark (UTF-8, UTF-16 or UTF-32), or in UTF-16 or UTF-32 without one (a zero among the first two
	 * bytes). Only a body whose first character there is {@code {} counts: another (a binary upload) is not JSON to
	 * any upstream either.
	 */
	static boolean otherThanUtf8Object(byte[] body) {
		int n = body.length;
		int b0 = (n > 0) ? body[0] & 0xFF : -1;
		int b1 = (n > 1) ? body[1] & 0xFF : -1;
		int b2 = (n > 2) ? body[2] & 0xFF : -1;
		int b3 = (n > 3) ? body[3] & 0xFF : -1;
		if (b0 == 0x00 && b1 == 0x00 && b2 == 0xFE && b3 == 0xFF) {
			return firstUnit(body, 4, 4, true) == '{';
		}
		if (b0 == 0xFF && b1 == 0xFE && b2 == 0x00 && b3 == 0x00) {
			return firstUnit(body, 4, 4, false) == '{';
		}
		if (b0 == 0xFE && b1 == 0xFF) {
			return firstUnit(body, 2, 2, true) == '{';
		}
		if (b0 == 0xFF && b1 == 0xFE) {
			return firstUnit(body, 2, 2, false) == '{';
		}
		if (b0 == 0xEF && b1 == 0xBB && b2 == 0xBF) {
			return firstUnit(body, 3, 1, false) == '{';
		}
		if (n >= 4 && b0 == 0) {
			return (b1 != 0) ? firstUnit(body, 0, 2, true) == '{' : firstUnit(body, 0, 4, true) == '{';
		}
		if (n >= 4 && b1 == 0) {
			return (b2 != 0 || b3 != 0) ? firstUnit(body, 0, 2, false) == '{' : firstUnit(body, 0, 4, false) == '{';
		}
		return false;
	}

	/** The first code unit from {@code from} that is not JSON whitespace, in units of this width; -1 if none. */
	private static long firstUnit(byte[] body, int from, int width, boolean bigEndian) {
		for (int at = from; at + width <= body.length; at += width) {
			long unit = 0;
			for (int k = 0; k < width; k++) {
				int b = body[at + (bigEndian ? k : width - 1 - k)] & 0xFF;
				unit = (unit << 8) | b;
			}
			if (unit != ' ' && unit != '\t' && unit != '\n' && unit != '\r') {
				return unit;
			}
		}
		return -1;
	}

}
