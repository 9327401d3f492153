package io.windowlimiter.gateway.key;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.util.StringUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * Keys a request by the client's IP address.
 *
 * <p>With {@code trustedHops} = 0 that is the address of the TCP peer. Behind N trusted proxies
 * (load balancers) that each append the address they saw to {@code X-Forwarded-For}, it is the
 * N-th entry from the right: entries further left were written by the client and could be spoofed
 * to pick another client's quota. A request carrying fewer entries than trusted hops did not come
 * through the proxies, so its TCP peer is used. Addresses are used as text, never looked up.
 */
public class ClientIpKeyResolver implements KeyResolver {

	static final String X_FORWARDED_FOR = "X-Forwarded-For";

	private final int trustedHops;

	public ClientIpKeyResolver(int trustedHops) {
		if (trustedHops < 0) {
			throw new IllegalArgumentException("trusted hops must be 0 or more, was " + trustedHops);
		}
		this.trustedHops = trustedHops;
	}

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		if (this.trustedHops > 0) {
			List<String> forwarded = forwardedFor(exchange);
			if (forwarded.size() >= this.trustedHops) {
				return Mono.just(forwarded.get(forwarded.size() - this.trustedHops));
			}
		}
		return Mono.justOrEmpty(peerAddress(exchange));
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

	private static String peerAddress(ServerWebExchange exchange) {
		InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
		if (remote == null) {
			return null;
		}
		return (remote.getAddress() != null) ? remote.getAddress().getHostAddress() : remote.getHostString();
	}

}
