package io.windowlimiter.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.policy.RouteLimit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
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
 * allocated unless a line is logged.
 */
public final class NearLimit {

	/** The default share: 0.8, Envoy's default {@code NEAR_LIMIT_RATIO}, early enough to act on. */
	public static final double DEFAULT_SHARE = 0.8;

	/** Counts nothing, logs nothing. */
	public static final NearLimit OFF = new NearLimit(2, RateLimitMetrics.NONE, null);

	private static final Log logger = LogFactory.getLog(NearLimit.class);

	/** Keys up to this long, of printable ASCII, are logged as they are. */
	private static final int PRINTED_KEY_LENGTH = 32;

	private final double share;

	private final RateLimitMetrics metrics;

	private final long logIntervalNanos;

	private final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE);

	/**
	 * @param share the share of a limit from which an allowed request counts, above 0 and at most 1
	 * @param metrics where to count
	 * @param logInterval at most one log line per this interval; null logs none
	 */
	public NearLimit(double share, RateLimitMetrics metrics, @Nullable Duration logInterval) {
		this.share = share;
		this.metrics = metrics;
		this.logIntervalNanos = (logInterval != null) ? logInterval.toNanos() : -1;
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
				if (this.logIntervalNanos >= 0 && mayLog()) {
					logger.info("Client " + printable(clientKey) + " is near limit '" + limits.get(i).name() + "' on route '"
							+ routeId + "': " + decisions.get(i).remaining() + " of " + quota + " left (at most one such "
							+ "line per " + Duration.ofNanos(this.logIntervalNanos) + ")");
				}
				return;
			}
		}
	}

	private boolean mayLog() {
		long now = System.nanoTime();
		long last = this.lastLogged.get();
		return (last == Long.MIN_VALUE || now - last >= this.logIntervalNanos) && this.lastLogged.compareAndSet(last, now);
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
