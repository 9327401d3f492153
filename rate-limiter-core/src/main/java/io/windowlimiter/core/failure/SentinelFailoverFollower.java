package io.windowlimiter.core.failure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.windowlimiter.core.algorithm.LimitScript;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;

/**
 * Moves the limiter's connection to the new primary as soon as the Sentinels announce a failover
 * ({@code +switch-master}). Lettuce asks the Sentinels for the primary only when it connects, and a
 * planned failover ({@code SENTINEL FAILOVER}) leaves the old primary up and taking writes until the
 * Sentinels demote it, 10 to 20 s later, when it drops them all to resync from the new one: without
 * this, every decision of those seconds was counted there and forgotten (measured: 11 s of counts).
 * What is left is the time from the promotion to the announcement (about a second).
 */
public final class SentinelFailoverFollower implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(SentinelFailoverFollower.class);

	private static final String SWITCH_MASTER = "+switch-master";

	private final LimitScript script;

	private final String master;

	private final RedisClient client = RedisClient.create();

	private final List<StatefulRedisPubSubConnection<String, String>> subscriptions = new ArrayList<>();

	/** The primary last moved to: each Sentinel announces the same switch, one reconnect is enough. */
	private volatile @Nullable String followed;

	/** Subscribes to every Sentinel of the configuration; one that cannot be reached now is left out. */
	public SentinelFailoverFollower(LimitScript script, RedisSentinelConfiguration sentinels) {
		this.script = script;
		this.master = Objects.requireNonNull(sentinels.getMaster(), "spring.data.redis.sentinel.master").getName();
		for (RedisNode sentinel : sentinels.getSentinels()) {
			RedisURI.Builder uri = RedisURI.builder().withHost(sentinel.getHost()).withPort(sentinel.getPort())
				.withTimeout(Duration.ofSeconds(2));
			if (sentinels.getSentinelPassword().isPresent()) {
				char[] password = sentinels.getSentinelPassword().get();
				if (sentinels.getSentinelUsername() != null) {
					uri.withAuthentication(sentinels.getSentinelUsername(), password);
				}
				else {
					uri.withPassword(password);
				}
			}
			try {
				StatefulRedisPubSubConnection<String, String> subscription = this.client.connectPubSub(uri.build());
				subscription.addListener(new RedisPubSubAdapter<>() {
					@Override
					public void message(String channel, String message) {
						switched(message);
					}
				});
				subscription.sync().subscribe(SWITCH_MASTER);
				this.subscriptions.add(subscription);
			}
			catch (RuntimeException ex) {
				logger.warn("Sentinel " + sentinel + " not reachable; its failover announcements will not be followed: " + ex);
			}
		}
	}

	/** {@code <master name> <old ip> <old port> <new ip> <new port>} */
	void switched(String message) {
		String[] parts = message.split(" ");
		if (parts.length != 5 || !parts[0].equals(this.master)) {
			return;
		}
		String primary = parts[3] + ":" + parts[4];
		if (primary.equals(this.followed)) {
			return;
		}
		this.followed = primary;
		logger.info("Sentinel failover of " + this.master + " to " + primary + ": reconnecting the limiter's connection");
		this.script.reconnect();
	}

	@Override
	public void close() {
		this.subscriptions.forEach(StatefulRedisPubSubConnection::close);
		this.client.shutdown();
	}

}
