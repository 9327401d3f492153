package io.windowlimiter.gateway.autoconfigure;

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
 * persistent reconnects, unknown nodes, uncovered slots) and a periodic refresh as a backstop.
 *
 * <p>Whatever the application set under {@code spring.data.redis.lettuce.cluster.refresh.*} wins.
 * Standalone and Sentinel connections have no cluster topology and are left alone (Lettuce asks the
 * Sentinels for the new primary by itself). Read routing is not touched either: the scripts are sent
 * with EVALSHA/EVAL, which Lettuce never sends to a replica whatever {@code read-from} says.
 */
public class RedisTopologyCustomizer implements LettuceClientOptionsBuilderCustomizer {

	/** How often the topology is read again when nothing triggered a refresh. */
	public static final Duration DEFAULT_REFRESH_PERIOD = Duration.ofSeconds(30);

	/**
	 * The least time between two adaptive refreshes. Lettuce's 30 s default means the refresh that a
	 * crashed primary triggers at once (and that still sees it) blocks the one that would see its
	 * promoted replica; a short pause lets the limiter find the new primary within seconds.
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
		if (this.adaptiveSet) {
			refresh.enableAdaptiveRefreshTrigger(current.getAdaptiveRefreshTriggers().toArray(RefreshTrigger[]::new))
				.adaptiveRefreshTriggersTimeout(current.getAdaptiveRefreshTimeout());
		}
		else {
			refresh.enableAllAdaptiveRefreshTriggers().adaptiveRefreshTriggersTimeout(DEFAULT_ADAPTIVE_REFRESH_TIMEOUT);
		}
		cluster.topologyRefreshOptions(refresh.build());
	}

}
