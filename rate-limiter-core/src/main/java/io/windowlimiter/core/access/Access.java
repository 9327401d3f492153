package io.windowlimiter.core.access;

import org.jspecify.annotations.Nullable;

/**
 * Why a client is let through or refused without its limits being asked: a list or an operator's rule.
 *
 * @param exempt true: never limited; false: refused with 403
 * @param source where it comes from, as shown to operators: {@code run-time}, {@code route list} or
 * {@code gateway list}
 * @param target for a run-time rule, the route or scope it was made on; else null
 * @param expiresAtMillis for a run-time rule, when it ends on the Redis clock (0 for never); else 0
 */
public record Access(boolean exempt, String source, @Nullable String target, long expiresAtMillis) {

	/** Made at run time through the {@code ratelimits} endpoint. */
	public static final String RUN_TIME = "run-time";

	/** The route's {@code window-rate-limiter.allow} or {@code .deny}. */
	public static final String ROUTE_LIST = "route list";

	/** The gateway's {@code window-rate-limiter.allow} or {@code .deny} properties. */
	public static final String GATEWAY_LIST = "gateway list";

	static final Access ROUTE_ALLOWED = new Access(true, ROUTE_LIST, null, 0);

	static final Access ROUTE_DENIED = new Access(false, ROUTE_LIST, null, 0);

	static final Access GATEWAY_ALLOWED = new Access(true, GATEWAY_LIST, null, 0);

	static final Access GATEWAY_DENIED = new Access(false, GATEWAY_LIST, null, 0);

	/** {@code exempt}, {@code block} or {@code deny} (a list's refusal, for good). */
	public String kind() {
		return this.exempt ? AccessRule.Kind.EXEMPT.id() : RUN_TIME.equals(this.source) ? AccessRule.Kind.BLOCK.id()
				: "deny";
	}

}
