package io.windowlimiter.core.key;

import java.time.Duration;

import io.windowlimiter.core.OccasionalLog;
import io.windowlimiter.core.QuotaProblem;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a request its route's key resolver found no key in (with {@code deny-empty-key}, the default),
 * on both servers: a problem-details body (RFC 9457) whose {@code detail} names what the resolver reads (the
 * header, an API key, a principal), never a value the request sent, and an INFO line in the log at most once a
 * minute (a client sending keyless requests as fast as it can must not flood the log), written off the request's
 * thread ({@link OccasionalLog}). A bare status told neither the client nor the operator why.
 */
public final class MissingKey {

	/** How often at most a refusal is logged, whichever route refused. */
	static final Duration LOG_INTERVAL = Duration.ofMinutes(1);

	private static final OccasionalLog log = new OccasionalLog(MissingKey.class, LOG_INTERVAL);

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

	/** An INFO line, at most once per {@link #LOG_INTERVAL}: which route refused a request for want of what. */
	public static void log(String routeId, int status, @Nullable Object resolver) {
		log.info(() -> "Route '" + routeId + "' refused a request with " + status + ": no client key in it ("
				+ source(resolver) + "); deny-empty-key: false would count such requests under one shared key (logged"
				+ " at most once a minute)");
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
