package io.windowlimiter.gateway.key;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.StringUtils;
import org.springframework.web.server.ServerWebExchange;
import io.windowlimiter.core.key.ClientIpKeys;
import io.windowlimiter.core.key.IpAddresses;
import io.windowlimiter.core.key.IpRange;

/**
 * Keys a request by the client's IP address, read as {@link ClientIpKeys} says: X-Forwarded-For only
 * behind trusted proxies, IPv6 clients by their network prefix.
 *
 * <p>The peer and the X-Forwarded-For headers are read as the TCP connection brought them, from Reactor
 * Netty's request under the exchange's (decorated or mutated ones included), not from the request's remote
 * address and headers: with forwarded-header handling on (Spring Boot turns the server's on by itself on
 * Kubernetes and other detected platforms; {@code server.forward-headers-strategy} or the gateway's
 * httpserver customizer do it on purpose) that address is what the leftmost X-Forwarded-For entry claims,
 * which any client writes, and Spring's forwarded-header transformer removes the header.
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
		ServerHttpRequest request = exchange.getRequest();
		if (nativeRequest(request) instanceof HttpServerRequest connection) {
			// as the connection brought them, whatever forwarded-header handling made of the request since
			return Mono.justOrEmpty(this.keys.keyOf(address(connection.connectionRemoteAddress()),
					entries(connection.requestHeaders().getAll(X_FORWARDED_FOR))));
		}
		// a request of another server than Reactor Netty (a test's mock): its remote address and headers
		return Mono.justOrEmpty(this.keys.keyOf(address(request.getRemoteAddress()),
				entries(request.getHeaders().getOrEmpty(X_FORWARDED_FOR))));
	}

	private static @Nullable Object nativeRequest(ServerHttpRequest request) {
		try {
			return ServerHttpRequestDecorator.getNativeRequest(request);
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			return null;
		}
	}

	private static List<String> entries(List<String> headers) {
		// Several X-Forwarded-For headers are one list, in order (RFC 9110, 5.3).
		List<String> entries = new ArrayList<>();
		for (String header : headers) {
			for (String entry : StringUtils.tokenizeToStringArray(header, ",")) {
				entries.add(entry);
			}
		}
		return entries;
	}

	/** Null for none, or for a socket without an IP address (a Unix domain socket). */
	private static byte @Nullable [] address(@Nullable SocketAddress socket) {
		if (!(socket instanceof InetSocketAddress remote)) {
			return null;
		}
		if (remote.getAddress() != null) {
			return IpAddresses.normalise(remote.getAddress().getAddress());
		}
		return IpAddresses.parseLiteral(remote.getHostString());
	}

}
