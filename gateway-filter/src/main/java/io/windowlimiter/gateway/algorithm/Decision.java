package io.windowlimiter.gateway.algorithm;

/**
 * One limit's answer for one request.
 *
 * @param allowed whether the request may pass
 * @param remaining units of quota left now (after this request when allowed)
 * @param resetMillis time until quota frees (see each script for what that means for it)
 * @param retryAfterMillis time after which a retry is allowed, 0 when allowed
 */
public record Decision(boolean allowed, long remaining, long resetMillis, long retryAfterMillis) {
}
