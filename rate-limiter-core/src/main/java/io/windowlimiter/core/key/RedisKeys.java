package io.windowlimiter.core.key;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The one place where Redis key names are built: {@code wrl:{<client key>}:<route id>:<algorithm suffix>}
 * for a route's own limits and {@code wrl:{<client key>}:scope:<scope>:<algorithm suffix>} for the limits
 * of a scope, which every route naming it shares.
 *
 * <p>The hash tag in braces is the client key alone: every key of one decision, the route's and its
 * scopes', lands on one Redis Cluster slot, so one script decides them all, and clients spread over all
 * slots. Keys come from clients and are hostile input: a part that is long or holds anything but
 * plain characters (braces, spaces, CRLF, percent signs, non-ASCII, binary) is replaced by
 * {@code #} and the Base64url SHA-256 of its UTF-8 bytes. {@code #} never occurs in a plain part, so
 * a hashed key cannot collide with a plain one, and a key stays under 200 bytes whatever comes in.
 * Route ids and scope names may not hold {@code :} plainly, so a route's keys (one part after the
 * route id) and a scope's (two parts after {@code scope}) never meet, even for a route named {@code scope}.
 */
public final class RedisKeys {

	/** Parts longer than this are hashed, which bounds the key length. */
	static final int MAX_PLAIN_LENGTH = 64;

	private static final String PREFIX = "wrl:";

	/**
	 * The plans and overrides operators assigned (a hash); beside it {@link #ASSIGNMENT_EXPIRY} and
	 * {@link #ASSIGNMENT_VERSION}. One hash tag for the three, so one script writes them together; they
	 * are read only when they change, never per decision.
	 */
	public static final String ASSIGNMENTS = PREFIX + "{assignments}";

	/** When each assignment expires (a sorted set), so that writes can drop expired ones. */
	public static final String ASSIGNMENT_EXPIRY = ASSIGNMENTS + ":expiry";

	/** Bumped on every change of the assignments; gateway instances poll it. */
	public static final String ASSIGNMENT_VERSION = ASSIGNMENTS + ":version";

	/**
	 * The client key of every request its key resolver gave none, where the route lets such requests pass
	 * ({@code deny-empty-key: false}): they are all counted together under it, on both servers alike. The
	 * name the gateway's own {@code RequestRateLimiter} filter gives them ({@code KeyResolver.EMPTY_KEY}).
	 */
	public static final String EMPTY_KEY = "____EMPTY_KEY__";

	private RedisKeys() {
	}

	/**
	 * The key of one client on one route for one algorithm.
	 * @param routeId the route, part of every key so routes never share quota
	 * @param clientKey what the route's key resolver returned
	 * @param suffix the algorithm's own suffix
	 */
	public static String of(String routeId, String clientKey, String suffix) {
		return tag(clientKey) + part(routeId, false) + ':' + suffix;
	}

	/**
	 * The key of one client in one scope for one algorithm: the same on every route naming the scope.
	 * @param scope the scope's name
	 * @param clientKey what the route's key resolver returned
	 * @param suffix the algorithm's own suffix
	 */
	public static String ofScope(String scope, String clientKey, String suffix) {
		return tag(clientKey) + "scope:" + part(scope, false) + ':' + suffix;
	}

	/**
	 * The client's settle markers of one minute, {@code wrl:{<client key>}:settled:<minute>}: a hash of the ids
	 * of the reservations settled, under the hash tag of {@code key} (any of the reservation's keys), so the
	 * settle script writes it with them. No limit's key ends so: after a route id or scope name comes one
	 * algorithm suffix, never two parts.
	 * @param key a key made by {@link #of} or {@link #ofScope}
	 * @param minute the minute of the settle, by the gateway's clock (ms since the epoch / 60,000)
	 */
	public static String settledMarkers(String key, long minute) {
		int tagEnd = key.indexOf("}:");
		if (!key.startsWith(PREFIX + '{') || tagEnd < 0) {
			throw new IllegalArgumentException("Not a client's key: " + key);
		}
		return key.substring(0, tagEnd + 2) + "settled:" + minute;
	}

	/**
	 * The client's resets hash, {@code wrl:{<client key>}:resets}: when each of its keys an operator reset was
	 * reset (reset.lua), read by the settle script; under the hash tag of {@code key}.
	 * @param key a key made by {@link #of} or {@link #ofScope} (or any key with a hash tag, as the script tests'
	 * own)
	 */
	public static String resets(String key) {
		int open = key.indexOf('{');
		int close = key.indexOf('}', open + 1);
		if (open < 0 || close < 0) {
			throw new IllegalArgumentException("Not a client's key: " + key);
		}
		return key.substring(0, close + 1) + ":resets";
	}

	private static String tag(String clientKey) {
		return PREFIX + '{' + part(clientKey, true) + "}:";
	}

	private static String part(String value, boolean colonAllowed) {
		if (value.length() <= MAX_PLAIN_LENGTH && isPlain(value, colonAllowed)) {
			return value;
		}
		return '#' + sha256(value);
	}

	private static boolean isPlain(String value, boolean colonAllowed) {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
					|| c == '_' || c == '.' || c == '@' || c == '/' || c == '=' || c == '+' || (colonAllowed && c == ':');
			if (!plain) {
				return false;
			}
		}
		return true;
	}

	private static String sha256(String value) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
			return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every JVM has SHA-256", ex);
		}
	}

}
