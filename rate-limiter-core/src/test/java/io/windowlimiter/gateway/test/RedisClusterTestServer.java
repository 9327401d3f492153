package io.windowlimiter.gateway.test;

import java.time.Duration;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.windowlimiter.core.autoconfigure.RedisTopologyCustomizer;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * A {@link RedisCluster} (started by test-support) with clients configured as the limiter's
 * auto-configuration configures them: Lettuce's cluster client with {@link RedisTopologyCustomizer}'s
 * topology refresh. It lives in the core's tests, not in test-support, because it needs the core's main code;
 * the adapters' tests get it from the core's test jar.
 *
 * <p>{@link #get()} is one cluster for the whole test JVM; tests that fail nodes over or kill them
 * {@link #start(Duration) start} one of their own and close it.
 */
public final class RedisClusterTestServer extends RedisCluster {

	private static RedisClusterTestServer shared;

	private final LettuceConnectionFactory connectionFactory;

	private final ReactiveStringRedisTemplate template;

	private RedisClusterTestServer(Duration nodeTimeout) {
		super(nodeTimeout);
		this.connectionFactory = connectionFactory(LettuceClientConfiguration.builder());
		this.template = new ReactiveStringRedisTemplate(this.connectionFactory);
	}

	/** The cluster shared by the whole test JVM, started on first use. */
	public static synchronized RedisClusterTestServer get() {
		if (shared == null) {
			shared = start(Duration.ofSeconds(5));
			System.out.println("Tests use a Redis Cluster at " + shared.nodeAddresses() + " (" + RedisProcess.binary() + ")");
		}
		return shared;
	}

	/** A cluster of the caller's own; a master is failed over {@code nodeTimeout} after it stops answering. */
	public static RedisClusterTestServer start(Duration nodeTimeout) {
		return new RedisClusterTestServer(nodeTimeout);
	}

	/** The connection factory of {@link #template()}: Lettuce cluster client, topology refresh on. */
	public LettuceConnectionFactory connectionFactory() {
		return this.connectionFactory;
	}

	/** A template on this cluster, as the limiter gets it from the auto-configuration. */
	public ReactiveStringRedisTemplate template() {
		return this.template;
	}

	/**
	 * A new, started connection factory on this cluster with the given client configuration, plus
	 * the topology refresh the auto-configuration turns on. The caller destroys it.
	 */
	public LettuceConnectionFactory connectionFactory(LettuceClientConfiguration.LettuceClientConfigurationBuilder client) {
		ClusterClientOptions.Builder options = ClusterClientOptions.builder();
		new RedisTopologyCustomizer(false, false).customize(options);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(nodeAddresses()),
				client.clientOptions(options.build()).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	@Override
	public void close() {
		this.connectionFactory.destroy();
		super.close();
	}

}
