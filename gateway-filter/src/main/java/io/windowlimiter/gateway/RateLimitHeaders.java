package io.windowlimiter.gateway;

import java.util.LinkedHashMap;
import java.util.Map;

import io.windowlimiter.gateway.algorithm.Decision;
import io.windowlimiter.gateway.algorithm.WindowPolicy;

/**
 * The one place where a decision becomes response headers. Times are whole seconds, rounded up, so a
 * client that waits as long as it is told is never early.
 */
public final class RateLimitHeaders {

	/** Requests allowed per window. */
	public static final String LIMIT = "X-RateLimit-Limit";

	/** Requests still allowed now. */
	public static final String REMAINING = "X-RateLimit-Remaining";

	/** Seconds until quota frees. */
	public static final String RESET = "X-RateLimit-Reset";

	/** IETF draft: the policy, {@code "<name>";q=<limit>;w=<window seconds>}. */
	public static final String POLICY = "RateLimit-Policy";

	/** IETF draft: the state, {@code "<name>";r=<remaining>;t=<seconds>}. */
	public static final String RATE_LIMIT = "RateLimit";

	/** Seconds after which a denied client may retry (only on denials). */
	public static final String RETRY_AFTER = "Retry-After";

	private RateLimitHeaders() {
	}

	/**
	 * The headers for one decision.
	 * @param policyName the policy's name in the IETF fields (the route id)
	 */
	public static Map<String, String> of(String policyName, WindowPolicy policy, Decision decision) {
		String name = quoted(policyName);
		long resetSeconds = ceilSeconds(decision.resetMillis());
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put(LIMIT, Long.toString(policy.limit()));
		headers.put(REMAINING, Long.toString(decision.remaining()));
		headers.put(RESET, Long.toString(resetSeconds));
		headers.put(POLICY, name + ";q=" + policy.limit() + ";w=" + Math.max(1, ceilSeconds(policy.windowMillis())));
		headers.put(RATE_LIMIT, name + ";r=" + decision.remaining() + ";t=" + resetSeconds);
		if (!decision.allowed()) {
			headers.put(RETRY_AFTER, Long.toString(Math.max(1, ceilSeconds(decision.retryAfterMillis()))));
		}
		return headers;
	}

	static long ceilSeconds(long millis) {
		return Math.max(0, Math.floorDiv(millis + 999, 1000));
	}

	/** An RFC 8941 sf-string: printable ASCII, with quote and backslash escaped. */
	private static String quoted(String value) {
		StringBuilder out = new StringBuilder(value.length() + 2).append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				out.append('\\').append(c);
			}
			else if (c >= 0x20 && c < 0x7f) {
				out.append(c);
			}
			else {
				out.append('_');
			}
		}
		return out.append('"').toString();
	}

}
