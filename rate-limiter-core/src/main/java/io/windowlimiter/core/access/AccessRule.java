package io.windowlimiter.core.access;

import org.jspecify.annotations.Nullable;

/**
 * What an operator decided about one client on one route or scope at run time: blocked (refused with
 * 403 whatever its quota) or exempt (never limited), for good or until it expires.
 *
 * @param kind block or exemption
 * @param expiresAtMillis when it ends, in ms since the epoch on the Redis server's clock; 0 for never
 */
public record AccessRule(Kind kind, long expiresAtMillis) {

	/** What the rule does. */
	public enum Kind {

		/** Refused with 403, without a Redis call. */
		BLOCK("block"),
		/** Never limited, without a Redis call; still counted. */
		EXEMPT("exempt");

		private final String id;

		Kind(String id) {
			this.id = id;
		}

		/** As stored and shown: {@code block} or {@code exempt}. */
		public String id() {
			return this.id;
		}

		/** The kind stored as {@code id}; null for one this version does not know. */
		public static @Nullable Kind of(String id) {
			for (Kind kind : values()) {
				if (kind.id.equals(id)) {
					return kind;
				}
			}
			return null;
		}

	}

	/** Whether it still holds at {@code nowMillis}. */
	public boolean isLive(long nowMillis) {
		return this.expiresAtMillis == 0 || nowMillis < this.expiresAtMillis;
	}

}
