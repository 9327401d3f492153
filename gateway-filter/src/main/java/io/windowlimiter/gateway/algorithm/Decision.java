package io.windowlimiter.gateway.algorithm;

import java.util.List;

/**
 * One answer of a window script.
 *
 * @param allowed whether the request may pass
 * @param remaining requests still allowed now, 0 when denied
 * @param resetMillis time until quota frees (see each script for what that means for it)
 * @param retryAfterMillis time after which a retry is allowed, 0 when allowed
 */
public record Decision(boolean allowed, long remaining, long resetMillis, long retryAfterMillis) {

	/** Reads the reply every window script gives: {allowed, remaining, reset ms, retry-after ms}. */
	static Decision fromReply(List<Long> reply) {
		if (reply.size() != 4) {
			throw new IllegalStateException("A window script must reply with 4 numbers, got " + reply);
		}
		return new Decision(reply.get(0) == 1L, reply.get(1), reply.get(2), reply.get(3));
	}

}
