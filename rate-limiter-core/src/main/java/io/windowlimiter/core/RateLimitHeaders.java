package io.windowlimiter.core;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.policy.RouteLimit;

/**
 * The one place where a decision becomes response headers. Times are whole seconds, rounded up, so a
 * client that waits as long as it is told is never early. Each set of headers (the de-facto X- ones
 * and the IETF draft's) can be switched off or renamed.
 */
public final class RateLimitHeaders {

	/** Requests allowed per window; for a token bucket, its burst (see {@link #quota}). */
	public static final String LIMIT = "X-RateLimit-Limit";

	/** Requests still allowed now. */
	public static final String REMAINING = "X-RateLimit-Remaining";

	/** Seconds until quota frees. */
	public static final String RESET = "X-RateLimit-Reset";

	/** IETF draft: every policy, {@code "<name>";q=<limit>;w=<window seconds>}, comma separated. */
	public static final String POLICY = "RateLimit-Policy";

	/** IETF draft: the state of the policy closest to running out, {@code "<name>";r=<remaining>;t=<seconds>}. */
	public static final String RATE_LIMIT = "RateLimit";

	/** Seconds after which a denied client may retry (only on denials). */
	public static final String RETRY_AFTER = "Retry-After";

	/**
	 * Which headers to send, under which names.
	 *
	 * @param xHeaders whether to send the X-RateLimit-* headers
	 * @param ietfHeaders whether to send RateLimit-Policy and RateLimit
	 */
	public record Names(boolean xHeaders, String limit, String remaining, String reset, boolean ietfHeaders,
			String policy, String rateLimit) {

		/** Every header, under its usual name. */
		public static Names defaults() {
			return new Names(true, LIMIT, REMAINING, RESET, true, POLICY, RATE_LIMIT);
		}

	}

	private final Names names;

	public RateLimitHeaders(Names names) {
		this.names = names;
	}

	/**
	 * The headers for one answer.
	 * @param limits every limit of the route, all listed in the policy header
	 * @param reported the limit whose state is reported: the one closest to running out
	 * @param decision that limit's decision
	 * @param blocked whether the request is refused (then Retry-After is sent, unless it can never pass)
	 */
	public Map<String, String> of(List<RouteLimit> limits, RouteLimit reported, Decision decision, boolean blocked) {
		return of(policy(limits), reported, decision, blocked);
	}

	/**
	 * As {@link #of(List, RouteLimit, Decision, boolean)}, with the policy header's value built ahead
	 * by {@link #policy}: it is the same for every answer of a route.
	 */
	public Map<String, String> of(String policy, RouteLimit reported, Decision decision, boolean blocked) {
		long resetSeconds = ceilSeconds(decision.resetMillis());
		Map<String, String> headers = new LinkedHashMap<>();
		if (this.names.xHeaders()) {
			headers.put(this.names.limit(), Long.toString(quota(reported.policy())));
			headers.put(this.names.remaining(), Long.toString(decision.remaining()));
			headers.put(this.names.reset(), Long.toString(resetSeconds));
		}
		if (this.names.ietfHeaders()) {
			headers.put(this.names.policy(), policy);
			headers.put(this.names.rateLimit(),
					quoted(reported.name()) + ";r=" + decision.remaining() + ";t=" + resetSeconds);
		}
		// no Retry-After for a request that can never pass: any time given would be a promise broken
		if (blocked && !decision.never()) {
			headers.put(RETRY_AFTER, Long.toString(Math.max(1, ceilSeconds(decision.retryAfterMillis()))));
		}
		return headers;
	}

	/**
	 * The policy header's value: every limit, {@code "<name>";q=<limit>;w=<window seconds>}, comma separated.
	 * The draft's {@code w} is whole seconds, so a window that is not (500 ms, 1.5 s) is rounded up: a client
	 * pacing itself to q per w then stays within the real limit, where rounding down (or w=0) would invite it
	 * past it, and leaving w out would advertise a quota with no window at all.
	 */
	public static String policy(List<RouteLimit> limits) {
		StringBuilder policies = new StringBuilder();
		for (RouteLimit limit : limits) {
			policies.append(policies.isEmpty() ? "" : ", ")
				.append(quoted(limit.name()))
				.append(";q=")
				.append(quota(limit.policy()))
				.append(";w=")
				.append(windowSeconds(limit.policy()));
		}
		return policies.toString();
	}

	/**
	 * The quota reported for a limit. A token bucket's is its burst, the most it allows at once: its
	 * remaining count runs up to the burst, and a limit below what remains would contradict it.
	 */
	public static long quota(WindowPolicy policy) {
		return (policy.algorithm() == Algorithm.TOKEN_BUCKET) ? policy.burst() : policy.limit();
	}

	/**
	 * The window reported with {@link #quota}, in whole seconds rounded up. A token bucket's is the time its
	 * burst takes to refill (burst * window / limit), so that q/w is still its rate, rounded towards the
	 * safe side, and its reset (until the bucket is full again) falls within it.
	 */
	public static long windowSeconds(WindowPolicy policy) {
		if (policy.algorithm() != Algorithm.TOKEN_BUCKET || policy.burst() == policy.limit()) {
			return ceilSeconds(policy.windowMillis());
		}
		// burst * window can pass 2^63 ms (10^9 per 366 d); the seconds cannot
		BigInteger millis = BigInteger.valueOf(policy.burst()).multiply(BigInteger.valueOf(policy.windowMillis()));
		BigInteger[] seconds = millis.divideAndRemainder(BigInteger.valueOf(policy.limit() * 1000));
		return seconds[0].longValueExact() + (seconds[1].signum() > 0 ? 1 : 0);
	}

	/** Milliseconds as whole seconds, rounded up, never negative: how every reset and wait is reported. */
	public static long ceilSeconds(long millis) {
		return Math.max(0, Math.floorDiv(millis + 999, 1000));
	}

	/** An RFC 8941 sf-string: printable ASCII, with quote and backslash escaped. */
	public static String quoted(String value) {
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
