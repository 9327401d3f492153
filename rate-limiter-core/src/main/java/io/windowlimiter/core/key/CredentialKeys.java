package io.windowlimiter.core.key;

import java.util.LinkedHashMap;
import java.util.Map;

import io.windowlimiter.core.policy.RouteArgs;
import org.jspecify.annotations.Nullable;

/**
 * A key resolver whose keys are credentials (API keys, bearer tokens, cookies): the limiter hashes them
 * ({@link ClientKeyHash}) where they enter it, so none is ever kept, printed or counted in clear. The
 * library's {@code apiKeyResolver} always says so, its {@code headerKeyResolver} when its header is one of
 * {@code window-rate-limiter.credential-headers}; a resolver of yours may implement this too. A route says it
 * of whatever resolver it names with the argument {@value #ROUTE_ARGUMENT}{@code : true}.
 */
public interface CredentialKeys {

	/** The route argument that marks its client keys as credentials ({@code window-rate-limiter.} prefixed). */
	String ROUTE_ARGUMENT = "credential-keys";

	/** Whether every key this resolver gives is a credential. */
	boolean keysAreCredentials();

	/** Whether the resolver (any object, as a route names it) says its keys are credentials. */
	static boolean readBy(@Nullable Object resolver) {
		return resolver instanceof CredentialKeys credentials && credentials.keysAreCredentials();
	}

	/**
	 * A route's limiter arguments, with {@code window-rate-limiter.credential-keys: true} when its resolver's
	 * keys are credentials, whatever the route wrote; else as given.
	 */
	static Map<String, Object> marked(Map<String, ?> args, @Nullable Object resolver) {
		Map<String, Object> marked = new LinkedHashMap<>(args);
		if (readBy(resolver)) {
			marked.put(RouteArgs.PREFIX + ROUTE_ARGUMENT, "true");
		}
		return marked;
	}

}
