package io.windowlimiter.gateway.filter;

import java.util.Map;
import java.util.Set;

import io.windowlimiter.core.CountStatuses;
import io.windowlimiter.core.DenyEmptyKey;
import io.windowlimiter.core.RefusalStatus;
import io.windowlimiter.core.ResponseCost;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import org.jspecify.annotations.Nullable;

/**
 * One {@code WindowRateLimit} filter's own arguments, checked: everything but its limits (which
 * {@code RouteArgs} reads) and its resolvers (beans). Checked once when the route is built, and at start-up
 * from the route's properties, with the same messages.
 *
 * @param policyId what the core knows the filter's limits by: the route id, or {@code <route id>@<id>}
 * @param costFromHeader the request header giving the cost; null for none
 * @param countStatuses the statuses that count; null: every response counts
 * @param costFromResponseHeader the response header giving the actual cost; null for none
 * @param statusCode the status of a refusal
 * @param denyEmptyKey whether a request its key resolver gives no key is refused
 * @param emptyKeyStatus the status of that refusal
 */
record FilterSettings(String policyId, @Nullable String costFromHeader, @Nullable CountStatuses countStatuses,
		@Nullable String costFromResponseHeader, int statusCode, boolean denyEmptyKey, int emptyKeyStatus) {

	/** Between the route id and the filter's {@code id}: plain in Redis keys and in the endpoint's paths. */
	static final char ID_SEPARATOR = PolicyRegistry.FILTER_SEPARATOR;

	/** The filter's own arguments; the rest are its limits', as {@code RouteArgs} reads them. */
	static final Set<String> OWN = Set.of("id", "key-resolver", "cost-resolver", "cost-from-header", "count-statuses",
			"cost-from-response-header", "status-code", "deny-empty-key", "empty-key-status", "llm", "max-body-bytes");

	/** The limits' arguments, as on the RequestRateLimiter filter without the {@code window-rate-limiter.} prefix. */
	static final Set<String> LIMITS = Set.of("algorithm", "limit", "window", "log-storage", "burst", "name", "scope",
			"plan", "cost", "shadow", "fail-mode", "instances", "unit", "model", "calendar", "time-zone", "week-start", "block-for",
			"quota-status", "allow", "deny", "max-delay", "lease", "credential-keys");

	static final String KNOWN = "id, key-resolver, cost-resolver, cost-from-header, count-statuses, "
			+ "cost-from-response-header, status-code, deny-empty-key, empty-key-status, llm, max-body-bytes, and the "
			+ "limits' algorithm, limit, window, log-storage, burst, name, scope, unit, model, calendar, time-zone, week-start, "
			+ "block-for, quota-status, allow, deny, max-delay, lease, limits[i].*, plan, cost, shadow, fail-mode, instances, "
			+ "credential-keys";

	/** Whether {@code name} is an argument of the filter (own, limits', or {@code limits[i].*}). */
	static boolean isKnown(String name) {
		return OWN.contains(name) || LIMITS.contains(name) || name.startsWith("limits[") || name.startsWith("limits.");
	}

	/**
	 * @param routeId the route the filter is on
	 * @param args the filter's own arguments by name, values as text (resolvers may be beans: only their presence
	 * is read)
	 * @throws InvalidRouteConfigurationException naming the route, the argument and what is allowed
	 */
	static FilterSettings of(String routeId, Map<String, ?> args) {
		String id = text(args, "id");
		if (id != null && !plain(id)) {
			throw new InvalidRouteConfigurationException(routeId, "id", "is '" + id + "'",
					"letters, digits, '-', '_' and '.', naming this filter among the route's WindowRateLimit filters "
							+ "(its limits are then known as " + routeId + ID_SEPARATOR + "<id>)");
		}
		String policyId = (id != null) ? routeId + ID_SEPARATOR + id : routeId;
		if (args.get("key-resolver") == null) {
			throw new InvalidRouteConfigurationException(policyId, "key-resolver", "is missing",
					"the key resolver that tells clients apart, \"#{@headerKeyResolver}\" (the X-API-Key header), "
							+ "\"#{@apiKeyResolver}\" (an API key: Authorization: Bearer, x-api-key or api-key), "
							+ "\"#{@clientIpKeyResolver}\" (the client's IP address), \"#{@principalNameKeyResolver}\" "
							+ "or a KeyResolver bean of yours");
		}
		String costFromHeader = header(policyId, args, "cost-from-header");
		String countText = text(args, "count-statuses");
		CountStatuses countStatuses = (countText != null) ? CountStatuses.parse(policyId, countText) : null;
		String costFromResponseHeader = header(policyId, args, "cost-from-response-header");
		checkLeaseNotSettled(policyId, text(args, "lease"), countText, costFromResponseHeader);
		return new FilterSettings(policyId, costFromHeader, countStatuses, costFromResponseHeader,
				status(policyId, args, "status-code", 429), deny(policyId, args), status(policyId, args, "empty-key-status", 403));
	}

	/**
	 * A lease admits requests from a part reserved ahead, with no reservation of their own to settle: a cost the
	 * response decides (count-statuses, cost-from-response-header) could not be given back or charged.
	 */
	static void checkLeaseNotSettled(String policyId, @Nullable String lease, @Nullable String countStatuses,
			@Nullable String costFromResponseHeader) {
		if (lease == null || noLease(lease) || (countStatuses == null && costFromResponseHeader == null)) {
			return;
		}
		String beside = (countStatuses != null) ? "count-statuses" : "cost-from-response-header";
		throw new InvalidRouteConfigurationException(policyId, "lease", "is '" + lease + "' beside " + beside,
				"either lease or a cost the response settles (count-statuses, cost-from-response-header): a request "
						+ "admitted from a leased part has no reservation of its own to settle");
	}

	/** Whether a lease as written means none: {@code 0}, {@code 0ms}, {@code 0s} (the core reads any other value). */
	static boolean noLease(String lease) {
		return lease.matches("0+(ms|s)?");
	}

	/** Whether requests of this filter are settled once their response is known (a second Redis call). */
	boolean settlesOnResponse() {
		return this.countStatuses != null || this.costFromResponseHeader != null;
	}

	private static @Nullable String text(Map<String, ?> args, String name) {
		Object value = args.get(name);
		return (value != null) ? value.toString().trim() : null;
	}

	private static @Nullable String header(String policyId, Map<String, ?> args, String name) {
		String header = text(args, name);
		return (header != null) ? ResponseCost.headerName(policyId, name, header) : null;
	}

	private static int status(String policyId, Map<String, ?> args, String name, int fallback) {
		return RefusalStatus.parse(policyId, name, text(args, name), fallback);
	}

	private static boolean deny(String policyId, Map<String, ?> args) {
		return DenyEmptyKey.parse(policyId, "deny-empty-key", text(args, "deny-empty-key"));
	}

	private static boolean plain(String id) {
		return !id.isEmpty() && id.length() <= 64
				&& id.chars().allMatch(c -> Character.isLetterOrDigit(c) && c < 128 || c == '-' || c == '_' || c == '.');
	}

}
