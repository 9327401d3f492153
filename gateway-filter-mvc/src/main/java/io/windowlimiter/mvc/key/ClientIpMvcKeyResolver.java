package io.windowlimiter.mvc.key;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.windowlimiter.core.key.ClientIpKeys;
import io.windowlimiter.core.key.IpAddresses;
import org.jspecify.annotations.Nullable;

import org.springframework.util.StringUtils;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * Keys a request by the client's IP address, read as {@link ClientIpKeys} says: X-Forwarded-For only
 * when the TCP peer is a trusted proxy, IPv6 clients by their network prefix. It reads the servlet's
 * remote address as the peer: leave {@code server.forward-headers-strategy} unset (or {@code none}), or
 * the servlet container replaces the peer by what X-Forwarded-For claims before this resolver sees it.
 */
public class ClientIpMvcKeyResolver implements MvcKeyResolver {

	private final ClientIpKeys keys;

	public ClientIpMvcKeyResolver(ClientIpKeys keys) {
		this.keys = keys;
	}

	@Override
	public @Nullable String resolve(ServerRequest request) {
		String remote = request.servletRequest().getRemoteAddr();
		byte[] peer = (remote != null) ? IpAddresses.parseLiteral(remote) : null;
		return this.keys.keyOf(peer, forwardedFor(request));
	}

	private static List<String> forwardedFor(ServerRequest request) {
		// Several X-Forwarded-For headers are one list, in order (RFC 9110, 5.3).
		List<String> entries = new ArrayList<>();
		for (String header : Collections.list(request.servletRequest().getHeaders(ClientIpKeys.X_FORWARDED_FOR))) {
			Collections.addAll(entries, StringUtils.tokenizeToStringArray(header, ","));
		}
		return entries;
	}

}
