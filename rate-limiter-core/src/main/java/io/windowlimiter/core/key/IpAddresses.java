package io.windowlimiter.core.key;

import java.util.Arrays;

import io.netty.util.NetUtil;

/**
 * Reads IP address literals without ever resolving a name, and brings each address to one form:
 * 4 bytes for IPv4 (IPv4-mapped IPv6 such as {@code ::ffff:1.2.3.4} included), 16 for IPv6. Text
 * comes from clients, so a host name must stay garbage: looking it up would let a client make the
 * gateway send DNS queries of its choice.
 */
public final class IpAddresses {

	private static final byte[] MAPPED_PREFIX = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff };

	private IpAddresses() {
	}

	/**
	 * The address an X-Forwarded-For entry names, or {@code null} if it names none. Besides a bare
	 * literal this takes {@code [v6]}, {@code [v6]:port} and {@code v4:port}, since some load balancers
	 * append the client's port.
	 */
	public static byte[] parseEntry(String entry) {
		String text = entry.strip();
		if (text.startsWith("[")) {
			int close = text.indexOf(']');
			if (close < 0 || !isPortSuffix(text, close + 1)) {
				return null;
			}
			text = text.substring(1, close);
		}
		else {
			int colon = text.indexOf(':');
			if (colon >= 0 && text.indexOf(':', colon + 1) < 0) {
				// one colon: IPv4 with a port (IPv6 has at least two)
				if (!isPortSuffix(text, colon)) {
					return null;
				}
				text = text.substring(0, colon);
			}
		}
		return parseLiteral(text);
	}

	/** A bare IPv4 or IPv6 literal, or {@code null} if the text is anything else. */
	public static byte[] parseLiteral(String text) {
		// Netty's parser reads literals only; it never resolves names.
		byte[] address = NetUtil.createByteArrayFromIpAddressString(text);
		return (address != null) ? normalise(address) : null;
	}

	/** IPv4-mapped IPv6 becomes plain IPv4: it is the same client, whichever socket family saw it. */
	public static byte[] normalise(byte[] address) {
		if (address.length == 16 && Arrays.equals(address, 0, 12, MAPPED_PREFIX, 0, 12)) {
			return Arrays.copyOfRange(address, 12, 16);
		}
		return address;
	}

	/** Canonical text: dotted IPv4, RFC 5952 IPv6 ({@code 2001:db8::1}). */
	public static String format(byte[] address) {
		return NetUtil.bytesToIpAddress(address);
	}

	private static boolean isPortSuffix(String text, int from) {
		if (from == text.length()) {
			return true;
		}
		if (text.charAt(from) != ':' || from + 1 == text.length() || text.length() - from - 1 > 5) {
			return false;
		}
		for (int i = from + 1; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c < '0' || c > '9') {
				return false;
			}
		}
		return true;
	}

}
