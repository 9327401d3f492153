package io.windowlimiter.core.autoconfigure;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions.RefreshTrigger;

import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.core.env.Environment;

/**
 * Turns on Lettuce's Redis Cluster topology refresh, which Spring Boot leaves off, so that the limiter
 * follows a failover or a resharding without a restart: adaptive refresh (on MOVED and ASK redirects,
 * persistent reconnects, unknown nodes, uncovered slots) and a periodic refresh as a backstop. Without
 * it, decisions for the slots of a crashed master never found its promoted replica (measured: still
 * failing a minute later).
 *
 * <p>Whatever the application set under {@code spring.data.redis.lettuce.cluster.refresh.*} wins.
 * Standalone and Sentinel connections are left alone: on reconnecting, Lettuce asks the Sentinels for
 * the primary, and {@code SentinelFailoverFollower} has the limiter's connection reconnect when they
 * announce a failover. Read routing is not touched either: the
 * scripts are sent with EVALSHA/EVAL, which Lettuce sends to primaries only, whatever
 * {@code read-from} says.
 */
public class RedisTopologyCustomizer implements LettuceClientOptionsBuilderCustomizer {

	/** How often the cluster topology is read again when nothing triggered a refresh. */
	public static final Duration DEFAULT_REFRESH_PERIOD = Duration.ofSeconds(30);

	/**
	 * The least time between two adaptive refreshes. With Lettuce's 30 s default, the refresh that a
	 * crashed primary triggers at once (and that still sees it as primary) blocks the one that would
	 * see its promoted replica for half a minute.
	 */
	public static final Duration DEFAULT_ADAPTIVE_REFRESH_TIMEOUT = Duration.ofSeconds(1);

	private static final String REFRESH = "spring.data.redis.lettuce.cluster.refresh.";

	private final boolean adaptiveSet;

	private final boolean periodSet;

	/** Leaves alone what the application configured in the given environment. */
	public RedisTopologyCustomizer(Environment environment) {
		this(environment.containsProperty(REFRESH + "adaptive"), environment.containsProperty(REFRESH + "period"));
	}

	/**
	 * @param adaptiveSet whether the application chose adaptive refresh itself
	 * @param periodSet whether the application chose a refresh period itself
	 */
	public RedisTopologyCustomizer(boolean adaptiveSet, boolean periodSet) {
		this.adaptiveSet = adaptiveSet;
		this.periodSet = periodSet;
	}

	@Override
	public void customize(ClientOptions.Builder builder) {
		if (!(builder instanceof ClusterClientOptions.Builder cluster)) {
			return;
		}
		ClusterTopologyRefreshOptions current = cluster.build().getTopologyRefreshOptions();
		ClusterTopologyRefreshOptions.Builder refresh = ClusterTopologyRefreshOptions.builder()
			.dynamicRefreshSources(current.useDynamicRefreshSources())
			.closeStaleConnections(current.isCloseStaleConnections())
			.refreshTriggersReconnectAttempts(current.getRefreshTriggersReconnectAttempts());
		if (this.periodSet) {
			refresh.enablePeriodicRefresh(current.isPeriodicRefreshEnabled()).refreshPeriod(current.getRefreshPeriod());
		}
		else {
			refresh.enablePeriodicRefresh(DEFAULT_REFRESH_PERIOD);
		}
		if (!this.adaptiveSet) {
			refresh.enableAllAdaptiveRefreshTriggers();
		}
		else if (!current.getAdaptiveRefreshTriggers().isEmpty()) {
			refresh.enableAdaptiveRefreshTrigger(current.getAdaptiveRefreshTriggers().toArray(RefreshTrigger[]::new));
		}
		// Boot has no property for it, so the short pause applies whoever turned adaptive refresh on
		refresh.adaptiveRefreshTriggersTimeout(DEFAULT_ADAPTIVE_REFRESH_TIMEOUT);
		cluster.topologyRefreshOptions(refresh.build());
	}

}
