package io.windowlimiter.core;

import java.util.List;
import java.util.Map;
import java.util.Set;

import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.policy.CompiledRoute;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.metering.LlmPrices;
import org.jspecify.annotations.Nullable;

/**
 * What a target named by an adapter or an operator resolves to: a route id to the route's compiled limits (its
 * own, else the gateway's default filters'), a scope name to the routes naming it, and a client's key to the key
 * the core knows it by there (on a route keyed by credentials its hash, see {@link CredentialRoutes}).
 */
final class Targets {

	private final PolicyRegistry registry;

	private final @Nullable PlanAssignments assignments;

	/** Routes whose client keys are credentials, hashed where they enter (without a secret until one is set). */
	private volatile CredentialRoutes credentials = new CredentialRoutes(new ClientKeyHash(null));

	/**
	 * @param registry the routes' compiled limits and the scopes they name
	 * @param assignments told to reindex when which keys are hashed changes; null for none
	 */
	Targets(PolicyRegistry registry, @Nullable PlanAssignments assignments) {
		this.registry = registry;
		this.assignments = assignments;
	}

	/** The route's own limits, else those set on the gateway's default filters; null when it has none. */
	@Nullable CompiledRoute route(String routeId) {
		CompiledRoute route = this.registry.route(routeId);
		return (route != null) ? route : this.registry.route(PolicyRegistry.DEFAULT_FILTERS);
	}

	/** The route's own limits only (not the default filters'); null when it has none. */
	@Nullable CompiledRoute ownRoute(String routeId) {
		return this.registry.route(routeId);
	}

	/** What LLM calls cost, for money limits. */
	LlmPrices prices() {
		return this.registry.prices();
	}

	/** Every scope some route names, with the routes naming it, by scope name. */
	Map<String, List<String>> scopes() {
		return this.registry.scopes();
	}

	/** The routes naming the scope, when the target is a scope and not a route id; else null. */
	@Nullable List<String> scopeRoutes(String target) {
		if (this.registry.route(target) != null) {
			return null;
		}
		List<String> routes = this.registry.scopes().get(target);
		return (routes != null && !routes.isEmpty()) ? routes : null;
	}

	/** The id the route's limits are registered by: its own, else the default filters' (see {@link #route}). */
	private String policyIdOf(String routeId) {
		return (this.registry.route(routeId) != null) ? routeId : PolicyRegistry.DEFAULT_FILTERS;
	}

	/** The key a request's client is known by on the route from here on: on a route keyed by credentials its hash. */
	String idOf(String routeId, String clientKey) {
		return this.credentials.any() ? this.credentials.stored(policyIdOf(routeId), clientKey) : clientKey;
	}

	/** The hash the route's lists are matched by, for a request's client ({@link CredentialRoutes#listHash}). */
	@Nullable ClientKeyHash listHash(String routeId, String clientKey) {
		return this.credentials.any() ? this.credentials.listHash(this.credentials.has(policyIdOf(routeId)), clientKey)
				: null;
	}

	/**
	 * The key the client an operator names is known by on the target (a route, or a scope: keyed by credentials
	 * when a route naming it is): on a target keyed by credentials the hash of the key given, unless it is one
	 * already (as the endpoint prints it); else the key as given.
	 */
	String clientKeyOf(String target, String clientKey) {
		List<String> scopeRoutes = scopeRoutes(target);
		boolean credentials = (scopeRoutes != null) ? scopeRoutes.stream().anyMatch(this.credentials::has)
				: this.credentials.has(policyIdOf(target));
		return this.credentials.ofOperator(credentials, clientKey);
	}

	/**
	 * The hash a credential an assignment names in clear (made before such keys were hashed) is known by now;
	 * null when the target keeps its keys as they are, or the key is a hash already.
	 */
	@Nullable String hashOfInClear(String target, String clientKey) {
		String known = clientKeyOf(target, clientKey);
		return known.equals(clientKey) ? null : known;
	}

	/** Notes whether the route's client keys are credentials ({@link CredentialRoutes#ARGUMENT}). */
	void configure(String routeId, Map<String, Object> args) {
		boolean credentialsBefore = this.credentials.has(routeId);
		this.credentials.configure(routeId, args);
		if (this.credentials.has(routeId) != credentialsBefore) {
			reindexAssignments();
		}
	}

	/** Forgets deleted routes. */
	void forget(Set<String> routeIds) {
		this.credentials.forget(routeIds);
	}

	/** Hashes the client keys of routes keyed by credentials with this hash (its secret) from now on. */
	void setClientKeyHash(ClientKeyHash hash) {
		this.credentials = this.credentials.withHash(hash);
		reindexAssignments();
	}

	/** Which assignments name a credential in clear depends on which routes hash their keys, and how. */
	private void reindexAssignments() {
		if (this.assignments != null) {
			this.assignments.reindex();
		}
	}

}
