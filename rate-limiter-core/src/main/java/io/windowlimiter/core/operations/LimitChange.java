package io.windowlimiter.core.operations;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * A change an operator made to one client's limits on one target, as every instance hears of it. On the
 * wire: the type, target and client, each URL-encoded and separated by spaces, so client keys holding
 * spaces, newlines or anything else travel intact.
 *
 * @param type what changed, e.g. {@link #RESET}
 * @param target the route id or scope name
 * @param client the client's key
 */
public record LimitChange(String type, String target, String client) {

	/** The client's counters were deleted: instances forget their cached denials of it. */
	public static final String RESET = "reset";

	/** The client was put on a plan: instances reload assignments and forget their cached denials of it. */
	public static final String ASSIGN = "assign";

	/** The client was given limits of its own: as {@link #ASSIGN}. */
	public static final String OVERRIDE = "override";

	/** The client's plan or override was taken away: as {@link #ASSIGN}. */
	public static final String CLEAR = "clear";

	/** The client was blocked: instances reload assignments (which keep blocks) and forget cached denials. */
	public static final String BLOCK = "block";

	/** The client was exempted: as {@link #BLOCK}. */
	public static final String EXEMPT = "exempt";

	/** The client was reset and its block lifted: as {@link #BLOCK}, the counts deleted too. */
	public static final String UNBLOCK = "unblock";

	/** A reset of {@code client} on {@code target}. */
	public static LimitChange reset(String target, String client) {
		return new LimitChange(RESET, target, client);
	}

	/** Whether the change is to the client's assignment, which every instance must reload. */
	public boolean changesAssignment() {
		return !RESET.equals(this.type);
	}

	/** The message published for this change. */
	public String encode() {
		return escape(this.type) + ' ' + escape(this.target) + ' ' + escape(this.client);
	}

	/** The change a message carries, or null when it is not one (another version, another publisher). */
	public static @Nullable LimitChange decode(String message) {
		String[] parts = message.split(" ", -1);
		if (parts.length != 3) {
			return null;
		}
		try {
			return new LimitChange(unescape(parts[0]), unescape(parts[1]), unescape(parts[2]));
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	/** A client key as logged: keys are client input, and a line break in one would forge log lines. */
	static String printable(String client) {
		return client.replace("\r", "\\r").replace("\n", "\\n");
	}

	private static String escape(String part) {
		return URLEncoder.encode(part, StandardCharsets.UTF_8);
	}

	private static String unescape(String part) {
		return URLDecoder.decode(part, StandardCharsets.UTF_8);
	}

}
