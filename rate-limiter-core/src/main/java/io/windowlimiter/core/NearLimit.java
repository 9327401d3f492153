package io.windowlimiter.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.policy.RouteLimit;
import org.jspecify.annotations.Nullable;

/**
 * Tells operators who is about to be refused, before they are (Envoy's {@code near_limit}): an allowed
 * request that leaves its client at or beyond {@code share} of a limit ({@code limit - remaining >= share *
 * limit}; for a token bucket, of its burst) is counted by {@code gateway.ratelimit.near_limit} per route
 * and, when a log interval is set, logged at most once per interval, naming route, limit and client (a
 * long or odd client key shortened to a hash). Counted per request, as Envoy does: a client that stays
 * near its limit keeps adding to the count, which is what a rate on a dashboard should show.
 *
 * <p>On the request path: a comparison per limit, and with a registry one counter increment; nothing is
 * allocated unless a line is logged, and that line is made and written on another thread ({@link OccasionalLog}).
 */
public final class NearLimit {

	/** The default share: 0.8, Envoy's default {@code NEAR_LIMIT_RATIO}, early enough to act on. */
	public static final double DEFAULT_SHARE = 0.8;

	/** Counts nothing, logs nothing. */
	public static final NearLimit OFF = new NearLimit(2, RateLimitMetrics.NONE, null);

	/** Keys up to this long, of printable ASCII, are logged as they are. */
	private static final int PRINTED_KEY_LENGTH = 32;

	private final double share;

	private final RateLimitMetrics metrics;

	private final @Nullable OccasionalLog log;

	private final @Nullable Duration logInterval;

	/**
	 * @param share the share of a limit from which an allowed request counts, above 0 and at most 1
	 * @param metrics where to count
	 * @param logInterval at most one log line per this interval; null logs none
	 */
	public NearLimit(double share, RateLimitMetrics metrics, @Nullable Duration logInterval) {
		this.share = share;
		this.metrics = metrics;
		this.log = (logInterval != null) ? new OccasionalLog(NearLimit.class, logInterval) : null;
		this.logInterval = logInterval;
	}

	/** Checks the share is above 0 and at most 1; the message names the property and what is allowed. */
	public static double checkShare(String property, double share) {
		if (!(share > 0 && share <= 1)) {
			throw new IllegalArgumentException(property + " is '" + share + "'; allowed: a share of a limit above 0 "
					+ "and at most 1, such as 0.8 (counts an allowed request that leaves its client at 80% of a limit "
					+ "or beyond)");
		}
		return share;
	}

	/** Looks at an allowed request's decisions, one per limit, in the limits' order. */
	void allowed(String routeId, List<RouteLimit> limits, List<Decision> decisions, String clientKey) {
		for (int i = 0; i < decisions.size(); i++) {
			long quota = RateLimitHeaders.quota(limits.get(i).policy());
			if (quota - decisions.get(i).remaining() >= this.share * quota) {
				this.metrics.nearLimit(routeId);
				if (this.log != null && this.log.isDue()) {
					String name = limits.get(i).name();
					long remaining = decisions.get(i).remaining();
					this.log.info(() -> "Client " + printable(clientKey) + " is near limit '" + name + "' on route '"
							+ routeId + "': " + remaining + " of " + quota + " left (at most one such line per "
							+ this.logInterval + ")");
				}
				return;
			}
		}
	}

	/**
	 * A client key as logged: as it is when short and printable ASCII, else its first characters (printable
	 * ones only) and a hash of the whole, so a key of 8 KB or with line breaks makes one short, honest line.
	 */
	static String printable(String clientKey) {
		boolean plain = clientKey.length() <= PRINTED_KEY_LENGTH
				&& clientKey.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != '\'');
		if (plain) {
			return "'" + clientKey + "'";
		}
		StringBuilder head = new StringBuilder();
		for (int i = 0; i < clientKey.length() && head.length() < 12; i++) {
			char c = clientKey.charAt(i);
			head.append((c > 0x20 && c < 0x7f && c != '\'') ? c : '_');
		}
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(clientKey.getBytes(StandardCharsets.UTF_8));
			return "'" + head + "...' (sha256 " + HexFormat.of().formatHex(digest, 0, 8) + ", " + clientKey.length()
					+ " chars)";
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
