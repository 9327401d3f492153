package io.windowlimiter.core.access;

/**
 * A route's static lists ({@code window-rate-limiter.allow} and {@code .deny}), or the gateway's, for all
 * routes ({@code window-rate-limiter.allow} and {@code .deny} properties).
 *
 * @param allow clients never limited
 * @param deny clients always refused with 403
 */
public record RouteLists(ClientList allow, ClientList deny) {

	/** No lists. */
	public static final RouteLists NONE = new RouteLists(ClientList.EMPTY, ClientList.EMPTY);

	/** Whether neither list names a client. */
	public boolean isEmpty() {
		return this.allow.isEmpty() && this.deny.isEmpty();
	}

}
