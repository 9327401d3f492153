package io.windowlimiter.mvc.key;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.windowlimiter.core.key.ClientIpKeys;
import io.windowlimiter.core.key.IpAddresses;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.util.StringUtils;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * Keys a request by the client's IP address, read as {@link ClientIpKeys} says: X-Forwarded-For only
 * when the TCP peer is a trusted proxy, IPv6 clients by their network prefix.
 *
 * <p>The peer is the TCP connection's: on Tomcat, as {@link TcpPeerValve} hands it over, whatever Tomcat's
 * RemoteIpValve or Spring's forwarded-header filter made of the servlet request's remote address (both
 * follow X-Forwarded-For, which any client writes, and Spring Boot turns the valve on by itself on
 * Kubernetes). On another servlet container, the servlet request's remote address: leave
 * {@code server.forward-headers-strategy} at {@code none} there.
 */
public class ClientIpMvcKeyResolver implements MvcKeyResolver {

	/**
	 * The request attribute that holds the TCP peer's address as text, e.g. {@code 10.0.0.7}, where a
	 * {@link TcpPeerValve} runs (the names are kept here: on another servlet container its class cannot load).
	 */
	public static final String PEER_ATTRIBUTE = "io.windowlimiter.mvc.key.TcpPeerValve.peer";

	/** The request attribute that holds the X-Forwarded-For headers as sent, a list, where a {@link TcpPeerValve} runs. */
	public static final String FORWARDED_FOR_ATTRIBUTE = "io.windowlimiter.mvc.key.TcpPeerValve.forwardedFor";

	private final ClientIpKeys keys;

	public ClientIpMvcKeyResolver(ClientIpKeys keys) {
		this.keys = keys;
	}

	@Override
	public @Nullable String resolve(ServerRequest request) {
		HttpServletRequest servlet = request.servletRequest();
		if (servlet.getAttribute(PEER_ATTRIBUTE) instanceof String peer) {
			// as the connection brought them, whatever the server's forwarded-header handling made of them since
			List<?> sent = (servlet.getAttribute(FORWARDED_FOR_ATTRIBUTE) instanceof List<?> headers) ? headers
					: List.of();
			return this.keys.keyOf(IpAddresses.parseLiteral(peer), entries(sent));
		}
		String remote = servlet.getRemoteAddr();
		return this.keys.keyOf((remote != null) ? IpAddresses.parseLiteral(remote) : null,
				entries(Collections.list(servlet.getHeaders(ClientIpKeys.X_FORWARDED_FOR))));
	}

	private static List<String> entries(List<?> headers) {
		// Several X-Forwarded-For headers are one list, in order (RFC 9110, 5.3).
		List<String> entries = new ArrayList<>();
		for (Object header : headers) {
			Collections.addAll(entries, StringUtils.tokenizeToStringArray(header.toString(), ","));
		}
		return entries;
	}

}
