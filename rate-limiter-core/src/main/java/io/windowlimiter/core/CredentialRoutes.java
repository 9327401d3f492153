package io.windowlimiter.core;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.core.policy.RouteArgs;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Which routes key their clients by credentials ({@code window-rate-limiter.credential-keys: true}, which the
 * adapters set for a resolver that says so, {@link CredentialKeys}), and what such a route's client key
 * becomes where it enters the core: its {@link ClientKeyHash}. From there on nothing else sees the
 * credential: Redis key names, the deny cache, the clients refused most, near-limit logs, assignments, blocks.
 * Keys of other routes (client IPs, principals, plain header values) stay as they are, as do their Redis keys.
 */
public final class CredentialRoutes {

	/** The route argument, as the core reads it. */
	public static final String ARGUMENT = RouteArgs.PREFIX + CredentialKeys.ROUTE_ARGUMENT;

	/** The property of the secret, for messages. */
	public static final String SECRET_PROPERTY = "window-rate-limiter.client-key-secret";

	private static final Log logger = LogFactory.getLog(CredentialRoutes.class);

	private final ClientKeyHash hash;

	/** The policy ids (a route's, or {@code <route>@<filter id>}) whose keys are credentials. */
	private final Set<String> routes = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean warned = new AtomicBoolean();

	public CredentialRoutes(ClientKeyHash hash) {
		this.hash = hash;
	}

	/**
	 * Reads the route's {@code credential-keys} argument, {@code true} or else {@code false} (the default),
	 * once {@link RouteArgs} has checked it.
	 */
	void configure(String routeId, Map<String, ?> args) {
		Object value = args.get(ARGUMENT);
		if (value == null || !value.toString().strip().equals("true")) {
			this.routes.remove(routeId);
			return;
		}
		this.routes.add(routeId);
		if (!this.hash.keyed() && this.warned.compareAndSet(false, true)) {
			logger.warn("Route '" + routeId + "' keys clients by credentials (API keys, tokens), and " + SECRET_PROPERTY
					+ " is not set: they are hashed with plain SHA-256 (keys read 'sha256:...'), so nothing shows them "
					+ "in clear, but a copy of Redis or of a log can be checked against guessed keys. Set "
					+ SECRET_PROPERTY + " to a random secret of " + ClientKeyHash.MIN_SECRET_LENGTH
					+ " characters or more (openssl rand -base64 32), the same on every instance; keys then read "
					+ "'hmac:...'.");
		}
	}

	/** Whether any route's keys are credentials (none, the usual: nothing to look up per request). */
	boolean any() {
		return !this.routes.isEmpty();
	}

	/** Whether the policy's client keys are credentials. */
	public boolean has(String policyId) {
		return !this.routes.isEmpty() && this.routes.contains(policyId);
	}

	/**
	 * The key a request's client is known by from here on: on a route of credentials its hash; the shared key
	 * of keyless requests and every key of other routes as they are.
	 */
	String stored(String policyId, String clientKey) {
		return (has(policyId) && !RedisKeys.EMPTY_KEY.equals(clientKey)) ? this.hash.of(clientKey) : clientKey;
	}

	/**
	 * The hash the lists of a target keyed by credentials are matched by ({@link
	 * io.windowlimiter.core.access.ClientList#matchesHashed}): this one there, null elsewhere and for the shared key
	 * of keyless requests, which is kept as it is.
	 * @param credentials whether the target's keys are credentials
	 */
	@Nullable ClientKeyHash listHash(boolean credentials, String clientKey) {
		return (credentials && !RedisKeys.EMPTY_KEY.equals(clientKey)) ? this.hash : null;
	}

	/**
	 * The key an operator names a client by, as the core knows it: on a target keyed by credentials the hash of
	 * the key given, unless it is a hash already (copied from the endpoint's answers); else as given.
	 * @param credentials whether the target's keys are credentials
	 */
	String ofOperator(boolean credentials, String clientKey) {
		return (credentials && !this.hash.isHash(clientKey) && !RedisKeys.EMPTY_KEY.equals(clientKey))
				? this.hash.of(clientKey) : clientKey;
	}

	/** Forgets the given routes (deleted ones). */
	void forget(Collection<String> policyIds) {
		this.routes.removeAll(policyIds);
	}

	/** The same routes, hashed with another hash (another secret). */
	CredentialRoutes withHash(ClientKeyHash other) {
		CredentialRoutes routes = new CredentialRoutes(other);
		routes.routes.addAll(this.routes);
		return routes;
	}

}
