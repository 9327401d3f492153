package io.windowlimiter.core.key;

import io.windowlimiter.core.QuotaProblem;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a request its route's key resolver found no key in (with {@code deny-empty-key}, the default),
 * on both servers: a problem-details body (RFC 9457) whose {@code detail} names what the resolver reads (the
 * header, an API key, a principal), never a value the request sent, and a DEBUG line in the log. A bare status
 * told neither the client nor the operator why.
 */
public final class MissingKey {

	private static final Log logger = LogFactory.getLog(MissingKey.class);

	private MissingKey() {
	}

	/**
	 * The problem-details body of the refusal.
	 * @param status the route's {@code empty-key-status}
	 * @param title the status's reason phrase ({@code Forbidden} for 403)
	 * @param resolver the route's key resolver, which says what it reads if it is a {@link KeySource}
	 */
	public static String problem(int status, String title, @Nullable Object resolver) {
		String detail = "This route counts requests per client by " + source(resolver)
				+ ", and the request has none; send it";
		return "{\"type\":\"about:blank\",\"title\":" + QuotaProblem.jsonString(title) + ",\"status\":" + status
				+ ",\"detail\":" + QuotaProblem.jsonString(detail) + "}";
	}

	/** A DEBUG line: which route refused a request for want of what, and with which status. */
	public static void log(String routeId, int status, @Nullable Object resolver) {
		if (logger.isDebugEnabled()) {
			logger.debug("Route '" + routeId + "' refused a request with " + status + ": no client key in it ("
					+ source(resolver) + "); deny-empty-key: false would count such requests under one shared key");
		}
	}

	/** What the resolver reads, as a phrase: {@code the X-API-Key header}. */
	static String source(@Nullable Object resolver) {
		if (resolver instanceof KeySource source) {
			return source.keySource();
		}
		// a lambda's class name says nothing
		return "what its key resolver reads" + ((resolver != null && !resolver.getClass().isHidden())
				? " (" + resolver.getClass().getSimpleName() + ")" : "");
	}

}
