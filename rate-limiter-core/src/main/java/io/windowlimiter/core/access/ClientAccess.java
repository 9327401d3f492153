package io.windowlimiter.core.access;

import java.util.List;

import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.plan.PlanAssignments;
import org.jspecify.annotations.Nullable;

/**
 * Decides, before any limit, whether a client is never limited or always refused on a route, in this
 * order (the most specific first): an operator's block or exemption on the route, then on a scope the
 * route names; the route's deny list, then its allow list; the gateway's deny list, then its allow list.
 * So a run-time exemption lifts a listed denial and a run-time block overrides any allow list; a route's
 * allow list overrides the gateway's deny list. An entry in both lists of one level is refused at
 * start-up; where a range of one and an entry of the other overlap, deny wins.
 *
 * <p>On the request path: with no lists and no rules this reads two empty collections and allocates
 * nothing; a listed client is answered without a Redis call.
 */
public final class ClientAccess {

	/** No lists, no run-time rules. */
	public static final ClientAccess NONE = new ClientAccess(RouteLists.NONE, null);

	private final RouteLists gateway;

	private final @Nullable PlanAssignments rules;

	/**
	 * @param gateway the lists for all routes
	 * @param rules where operators' blocks and exemptions are kept (beside plan assignments); null for none
	 */
	public ClientAccess(RouteLists gateway, @Nullable PlanAssignments rules) {
		this.gateway = gateway;
		this.rules = rules;
	}

	/** The lists for all routes. */
	public RouteLists gateway() {
		return this.gateway;
	}

	/**
	 * Why the client is exempt or refused on the route, or null (the common case) when its limits decide.
	 * @param scopes the scopes the route names, whose rules apply to it too
	 * @param lists the route's own lists
	 */
	public @Nullable Access of(String routeId, List<String> scopes, RouteLists lists, String clientKey) {
		return of(routeId, scopes, lists, clientKey, null);
	}

	/**
	 * As {@link #of(String, List, RouteLists, String)}, for a client of a route keyed by credentials: every rule and
	 * list knows it by {@code clientKey}, the hash the core made of its credential; the lists' entries in clear are
	 * hashed alike ({@link ClientList#matchesHashed}). The credential as the client sent it is matched against
	 * nothing, so a client sending an entry's hash as its key is not that entry.
	 * @param hash the hash of the route's keys; null for a route whose keys are not credentials
	 */
	public @Nullable Access of(String routeId, List<String> scopes, RouteLists lists, String clientKey,
			@Nullable ClientKeyHash hash) {
		PlanAssignments rules = this.rules;
		if (rules != null && rules.hasAccessRules()) {
			Access found = rule(rules, routeId, clientKey);
			for (int i = 0; found == null && i < scopes.size(); i++) {
				found = rule(rules, scopes.get(i), clientKey);
			}
			if (found != null) {
				return found;
			}
		}
		if (matches(lists.deny(), clientKey, hash)) {
			return Access.ROUTE_DENIED;
		}
		if (matches(lists.allow(), clientKey, hash)) {
			return Access.ROUTE_ALLOWED;
		}
		if (matches(this.gateway.deny(), clientKey, hash)) {
			return Access.GATEWAY_DENIED;
		}
		if (matches(this.gateway.allow(), clientKey, hash)) {
			return Access.GATEWAY_ALLOWED;
		}
		return null;
	}

	private static boolean matches(ClientList list, String clientKey, @Nullable ClientKeyHash hash) {
		return (hash != null) ? list.matchesHashed(clientKey, hash) : list.matches(clientKey);
	}

	/** The operator's rule for the client on exactly this route or scope, or null. */
	public @Nullable Access rule(String target, String clientKey) {
		return (this.rules != null) ? rule(this.rules, target, clientKey) : null;
	}

	private @Nullable Access rule(PlanAssignments rules, String target, String clientKey) {
		AccessRule rule = rules.access(target, clientKey);
		return (rule != null)
				? new Access(rule.kind() == AccessRule.Kind.EXEMPT, Access.RUN_TIME, target, rule.expiresAtMillis()) : null;
	}

	/** How long until a run-time rule ends, in ms (its end is on the Redis clock); -1 for one that never does. */
	public long millisLeft(Access access) {
		if (access.expiresAtMillis() == 0 || this.rules == null) {
			return -1;
		}
		return Math.max(1, access.expiresAtMillis() - this.rules.redisNow());
	}

}
