package io.windowlimiter.core.key;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The client-IP key of a request, from plain values every gateway adapter has: the TCP peer's address
 * and the X-Forwarded-For entries, in order.
 *
 * <p>The client is the TCP peer unless the peer is a trusted proxy. Only then is X-Forwarded-For read,
 * from the right: each proxy appends the address it saw, so the last entry was written by the peer,
 * and an entry further left is believed only while the entry to its right is a trusted proxy too. The
 * client is the first untrusted address met, or the leftmost read if all are trusted. Entries left of
 * it were written by the client and are never read, so a client cannot choose its own key. An entry
 * that is not an IP literal stops the walk and the last trusted address read is used: garbage never
 * becomes a key, and nothing is ever looked up in DNS.
 *
 * <p>An IPv6 client is keyed by its network prefix ({@code /64} usually), since one host is handed a
 * whole {@code /64} and could otherwise take a fresh quota per address. Keys are canonical text:
 * {@code 203.0.113.7}, {@code 2001:db8:1:2::/64}; IPv4-mapped IPv6 is keyed as the IPv4 address.
 */
public final class ClientIpKeys {

	public static final String X_FORWARDED_FOR = "X-Forwarded-For";

	private final List<IpRange> trustedProxies;

	private final int maxHops;

	private final int ipv6PrefixLength;

	/**
	 * @param trustedProxies the proxies whose X-Forwarded-For entries are believed; empty trusts none
	 * @param maxHops the most X-Forwarded-For entries read, however many are trusted
	 * @param ipv6PrefixLength how many leading bits of an IPv6 address make the key, 0 .. 128
	 */
	public ClientIpKeys(List<IpRange> trustedProxies, int maxHops, int ipv6PrefixLength) {
		if (maxHops < 0) {
			throw new IllegalArgumentException("trusted proxy hops must be 0 or more, was " + maxHops);
		}
		if (ipv6PrefixLength < 0 || ipv6PrefixLength > 128) {
			throw new IllegalArgumentException("IPv6 prefix length must be 0 .. 128, was " + ipv6PrefixLength);
		}
		this.trustedProxies = List.copyOf(trustedProxies);
		this.maxHops = maxHops;
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	/**
	 * @param peer the TCP peer's address (4 or 16 bytes), or {@code null} when unknown
	 * @param forwardedFor every X-Forwarded-For entry, left to right, across all such headers
	 * @return the key, or {@code null} when the peer is unknown
	 */
	public @Nullable String keyOf(byte @Nullable [] peer, List<String> forwardedFor) {
		if (peer == null) {
			return null;
		}
		byte[] client = IpAddresses.normalise(peer);
		if (isTrusted(client)) {
			int last = forwardedFor.size() - 1;
			for (int i = last; i >= 0 && last - i < this.maxHops; i--) {
				byte[] entry = IpAddresses.parseEntry(forwardedFor.get(i));
				if (entry == null) {
					break;
				}
				client = entry;
				if (!isTrusted(entry)) {
					break;
				}
			}
		}
		return key(client);
	}

	private boolean isTrusted(byte[] address) {
		for (IpRange range : this.trustedProxies) {
			if (range.contains(address)) {
				return true;
			}
		}
		return false;
	}

	private String key(byte[] address) {
		if (address.length == 4 || this.ipv6PrefixLength == 128) {
			return IpAddresses.format(address);
		}
		return IpAddresses.format(IpRange.mask(address, this.ipv6PrefixLength)) + "/" + this.ipv6PrefixLength;
	}

}
