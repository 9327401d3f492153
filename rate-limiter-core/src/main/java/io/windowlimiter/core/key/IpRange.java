package io.windowlimiter.core.key;

import java.util.Arrays;

import io.netty.util.NetUtil;

/**
 * One address or CIDR range, such as {@code 10.0.0.5}, {@code 10.0.0.0/8} or {@code 2001:db8::/32}.
 * Matching compares bits, not text, so {@code 2001:db8::1} and {@code 2001:0db8:0:0::1} are one address.
 * An IPv4 range matches IPv4-mapped IPv6 addresses too: both are normalised to IPv4 first.
 */
public final class IpRange {

	private final byte[] network;

	private final int prefixLength;

	private IpRange(byte[] network, int prefixLength) {
		this.network = mask(network, prefixLength);
		this.prefixLength = prefixLength;
	}

	/**
	 * Reads an address ({@code 10.0.0.5}, a range of one) or a CIDR range ({@code 10.0.0.0/8}). Bits
	 * past the prefix are ignored, as nginx's {@code set_real_ip_from} does.
	 * @throws IllegalArgumentException if the text is neither; host names are refused, never resolved
	 */
	public static IpRange of(String text) {
		String trimmed = text.strip();
		int slash = trimmed.indexOf('/');
		String addressText = (slash < 0) ? trimmed : trimmed.substring(0, slash);
		byte[] raw = NetUtil.createByteArrayFromIpAddressString(addressText);
		if (raw == null) {
			throw new IllegalArgumentException("'" + text + "' is not an IP address or CIDR range; write one like"
					+ " 10.0.0.5, 10.0.0.0/8 or 2001:db8::/32");
		}
		byte[] address = IpAddresses.normalise(raw);
		int bits = address.length * 8;
		if (slash < 0) {
			return new IpRange(address, bits);
		}
		if (address.length != raw.length) {
			throw new IllegalArgumentException("'" + text + "' is an IPv4-mapped IPv6 range; write it as an IPv4 range");
		}
		int prefixLength = parsePrefix(trimmed.substring(slash + 1));
		if (prefixLength < 0 || prefixLength > bits) {
			throw new IllegalArgumentException(
					"'" + text + "' has prefix length '" + trimmed.substring(slash + 1) + "'; allowed: 0 .. " + bits);
		}
		return new IpRange(address, prefixLength);
	}

	/** How many leading bits the range fixes: 32 (IPv4) or 128 (IPv6) for one address. */
	public int prefixLength() {
		return this.prefixLength;
	}

	/** Whether the address (as {@link IpAddresses} normalises it) lies in this range. */
	public boolean contains(byte[] address) {
		if (address.length != this.network.length) {
			return false;
		}
		byte[] masked = mask(address, this.prefixLength);
		return Arrays.equals(masked, this.network);
	}

	/** The address with every bit past {@code prefixLength} cleared. */
	public static byte[] mask(byte[] address, int prefixLength) {
		byte[] masked = address.clone();
		for (int i = 0; i < masked.length; i++) {
			int keep = Math.min(8, Math.max(0, prefixLength - i * 8));
			masked[i] &= (byte) (0xff << (8 - keep));
		}
		return masked;
	}

	private static int parsePrefix(String text) {
		if (text.isEmpty() || text.length() > 3 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
			return -1;
		}
		return Integer.parseInt(text);
	}

	@Override
	public String toString() {
		return IpAddresses.format(this.network) + "/" + this.prefixLength;
	}

}
