package io.windowlimiter.gateway.key;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.util.StringUtils;
import org.springframework.web.server.ServerWebExchange;
import io.windowlimiter.core.key.ClientIpKeys;
import io.windowlimiter.core.key.IpAddresses;
import io.windowlimiter.core.key.IpRange;

/**
 * Keys a request by the client's IP address, read as {@link ClientIpKeys} says: X-Forwarded-For only
 * behind trusted proxies, IPv6 clients by their network prefix.
 */
public class ClientIpKeyResolver implements KeyResolver {

	static final String X_FORWARDED_FOR = ClientIpKeys.X_FORWARDED_FOR;

	private final ClientIpKeys keys;

	/**
	 * @param trustedProxies the proxies whose X-Forwarded-For entries are believed; empty trusts none
	 * @param maxHops the most X-Forwarded-For entries read, however many are trusted
	 * @param ipv6PrefixLength how many leading bits of an IPv6 address make the key, 0 .. 128
	 */
	public ClientIpKeyResolver(List<IpRange> trustedProxies, int maxHops, int ipv6PrefixLength) {
		this.keys = new ClientIpKeys(trustedProxies, maxHops, ipv6PrefixLength);
	}

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		return Mono.justOrEmpty(this.keys.keyOf(peerAddress(exchange), forwardedFor(exchange)));
	}

	private static List<String> forwardedFor(ServerWebExchange exchange) {
		// Several X-Forwarded-For headers are one list, in order (RFC 9110, 5.3).
		List<String> entries = new ArrayList<>();
		for (String header : exchange.getRequest().getHeaders().getOrEmpty(X_FORWARDED_FOR)) {
			for (String entry : StringUtils.tokenizeToStringArray(header, ",")) {
				entries.add(entry);
			}
		}
		return entries;
	}

	private static byte[] peerAddress(ServerWebExchange exchange) {
		InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
		if (remote == null) {
			return null;
		}
		if (remote.getAddress() != null) {
			return IpAddresses.normalise(remote.getAddress().getAddress());
		}
		return IpAddresses.parseLiteral(remote.getHostString());
	}

}
