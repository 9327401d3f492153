package io.windowlimiter.core.access;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.key.IpAddresses;
import io.windowlimiter.core.key.IpRange;
import org.jspecify.annotations.Nullable;

/**
 * A list of clients, as written in an allow or deny list: client keys (matched exactly, as the route's
 * key resolver gives them), and IP addresses and CIDR ranges (matched by bits, for routes keyed by the
 * client-IP resolver). An IP key is {@code 203.0.113.7}, or an IPv6 network prefix such as
 * {@code 2001:db8:1:2::/64}: a range matches a prefix key when the whole prefix lies in the range, so
 * {@code 2001:db8::/32} matches {@code 2001:db8:1:2::/64}, while a single IPv6 address never matches a
 * /64 key (write the /64 instead). Made once, when routes or properties are read; {@link #matches} reads
 * no text but the key, and parses it as an address only when the list holds ranges.
 */
public final class ClientList {

	/** What an entry may be, for messages. */
	public static final String ALLOWED = "client keys as the route's key resolver gives them (no spaces or commas), "
			+ "IP addresses or CIDR ranges such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32";

	/** The empty list. */
	public static final ClientList EMPTY = new ClientList(Set.of(), List.of(), List.of());

	private final Set<String> keys;

	private final List<IpRange> ranges;

	private final List<String> entries;

	/** {@link #keys} as a route keyed by credentials knows them, by the hash they were made with; null until asked. */
	private volatile @Nullable Hashed hashed;

	private ClientList(Set<String> keys, List<IpRange> ranges, List<String> entries) {
		this.keys = keys;
		this.ranges = ranges;
		this.entries = entries;
	}

	/**
	 * Reads entries: each a client key, an IP address or a CIDR range. An entry that reads as an address
	 * with a prefix must be a valid range; {@code 10.0.0.0/33} is refused rather than taken as a key nobody has.
	 * @throws IllegalArgumentException naming the first bad entry (by position) and why
	 */
	public static ClientList of(List<String> entries) {
		if (entries.isEmpty()) {
			return EMPTY;
		}
		Set<String> keys = new HashSet<>();
		List<IpRange> ranges = new ArrayList<>();
		List<String> written = new ArrayList<>();
		for (int i = 0; i < entries.size(); i++) {
			String entry = (entries.get(i) != null) ? entries.get(i).strip() : "";
			if (entry.isEmpty()) {
				throw new IllegalArgumentException("entry " + i + " is empty");
			}
			for (int c = 0; c < entry.length(); c++) {
				char ch = entry.charAt(c);
				if (ch <= ' ' || ch == ',' || ch == 0x7f) {
					throw new IllegalArgumentException("entry " + i + " '" + entry.replaceAll("\\p{Cntrl}", "?")
							+ "' holds a space, comma or control character");
				}
			}
			if (looksLikeAddress(entry)) {
				try {
					ranges.add(IpRange.of(entry));
				}
				catch (IllegalArgumentException ex) {
					throw new IllegalArgumentException("entry " + i + " '" + entry + "' is not a valid address or range: "
							+ ex.getMessage(), ex);
				}
			}
			else {
				keys.add(entry);
			}
			written.add(entry);
		}
		return new ClientList(Set.copyOf(keys), List.copyOf(ranges), List.copyOf(written));
	}

	/** Comma-separated entries, as a route argument holds them. */
	public static ClientList ofText(String text) {
		List<String> entries = new ArrayList<>();
		for (String entry : text.split(",", -1)) {
			entries.add(entry);
		}
		return (text.isBlank()) ? EMPTY : of(entries);
	}

	/**
	 * An address or range, or what was meant as one: digits and dots with a slash or three dots (IPv4), or
	 * hex digits and at least two colons (IPv6). Anything else is a client key.
	 */
	private static boolean looksLikeAddress(String entry) {
		if (IpAddresses.parseLiteral(entry) != null) {
			return true;
		}
		int slash = entry.indexOf('/');
		String address = (slash < 0) ? entry : entry.substring(0, slash);
		if (address.isEmpty()) {
			return false;
		}
		boolean ipv4 = address.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'))
				&& (slash >= 0 || address.chars().filter(c -> c == '.').count() == 3);
		boolean ipv6 = address.chars().filter(c -> c == ':').count() >= 2
				&& address.chars().allMatch(c -> c == ':' || c == '.' || Character.digit(c, 16) >= 0);
		return ipv4 || ipv6;
	}

	/** Whether the list names no client. */
	public boolean isEmpty() {
		return this.entries.isEmpty();
	}

	/** The entries as written, trimmed, for operators. */
	public List<String> entries() {
		return this.entries;
	}

	/** Whether the client key is listed: exactly, or as an address or network prefix within a listed range. */
	public boolean matches(String clientKey) {
		if (this.keys.contains(clientKey)) {
			return true;
		}
		if (this.ranges.isEmpty()) {
			return false;
		}
		int slash = clientKey.indexOf('/');
		byte[] address = IpAddresses.parseLiteral((slash < 0) ? clientKey : clientKey.substring(0, slash));
		if (address == null) {
			return false;
		}
		int prefixLength = address.length * 8;
		if (slash >= 0) {
			prefixLength = prefix(clientKey.substring(slash + 1), prefixLength);
			if (prefixLength < 0) {
				return false;
			}
		}
		for (IpRange range : this.ranges) {
			// a prefix key is one client only when all of it lies in the range
			if (range.prefixLength() <= prefixLength && range.contains(address)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a client of a route keyed by credentials is listed: its key's hash ({@code hashedKey}, what the core
	 * made of the credential it sent) against each entry's, an entry in clear hashed once with the same hash, an
	 * entry written as a hash of this instance's form taken as it is. The credential the client sent is never
	 * compared to an entry as it is: a client that sends an entry's hash text as its key has it hashed again, so it
	 * matches nothing (the hash is shown by the endpoint and logs; knowing it must not exempt anyone).
	 */
	public boolean matchesHashed(String hashedKey, ClientKeyHash hash) {
		if (this.keys.isEmpty()) {
			return false;
		}
		Hashed hashed = this.hashed;
		if (hashed == null || hashed.hash != hash) {
			Set<String> keys = new HashSet<>();
			for (String key : this.keys) {
				keys.add(hash.isHash(key) ? key : hash.of(key));
			}
			hashed = new Hashed(hash, Set.copyOf(keys));
			this.hashed = hashed;
		}
		return hashed.keys.contains(hashedKey);
	}

	/** The first entry both lists name as written, or null: an entry in both is a mistake. */
	public @Nullable String sharedWith(ClientList other) {
		for (String entry : this.entries) {
			if (other.entries.contains(entry)) {
				return entry;
			}
		}
		return null;
	}

	private static int prefix(String text, int max) {
		if (text.isEmpty() || text.length() > 3 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
			return -1;
		}
		int value = Integer.parseInt(text);
		return (value <= max) ? value : -1;
	}

	/** The client keys of a list, hashed with {@code hash}. */
	private record Hashed(ClientKeyHash hash, Set<String> keys) {
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof ClientList list && list.entries.equals(this.entries);
	}

	@Override
	public int hashCode() {
		return this.entries.hashCode();
	}

	@Override
	public String toString() {
		return String.join(",", this.entries);
	}

}
