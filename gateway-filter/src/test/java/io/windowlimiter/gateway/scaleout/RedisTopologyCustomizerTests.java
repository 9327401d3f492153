package io.windowlimiter.gateway.scaleout;

import java.time.Duration;
import java.util.Optional;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.ReadFrom;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions.RefreshTrigger;
import io.windowlimiter.core.autoconfigure.RedisTopologyCustomizer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The topology refresh the library turns on, applied by Spring Boot's own Redis auto-configuration
 * to the connection factory it builds from {@code spring.data.redis.*}. Nothing connects here: the
 * factory is only built.
 */
class RedisTopologyCustomizerTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
		.withUserConfiguration(FailoverTests.TopologyRefresh.class);

	private static ClientOptions clientOptions(ApplicationContext context) {
		return context.getBean(LettuceConnectionFactory.class).getClientConfiguration().getClientOptions().orElseThrow();
	}

	private static ClusterTopologyRefreshOptions refresh(ApplicationContext context) {
		return ((ClusterClientOptions) clientOptions(context)).getTopologyRefreshOptions();
	}

	@Test
	void onAClusterAdaptiveAndPeriodicRefreshAreOn() {
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000").run(context -> {
			ClusterTopologyRefreshOptions refresh = refresh(context);
			assertThat(refresh.getAdaptiveRefreshTriggers()).containsExactlyInAnyOrder(RefreshTrigger.values());
			assertThat(refresh.getAdaptiveRefreshTimeout()).isEqualTo(RedisTopologyCustomizer.DEFAULT_ADAPTIVE_REFRESH_TIMEOUT);
			assertThat(refresh.isPeriodicRefreshEnabled()).isTrue();
			assertThat(refresh.getRefreshPeriod()).isEqualTo(RedisTopologyCustomizer.DEFAULT_REFRESH_PERIOD);
			// Boot's own setting is kept
			assertThat(refresh.useDynamicRefreshSources()).isTrue();
		});
	}

	@Test
	void whatTheApplicationSetWins() {
		this.runner
			.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:7000",
					"spring.data.redis.lettuce.cluster.refresh.adaptive=false",
					"spring.data.redis.lettuce.cluster.refresh.period=10s",
					"spring.data.redis.lettuce.cluster.refresh.dynamic-refresh-sources=false")
			.run(context -> {
				ClusterTopologyRefreshOptions refresh = refresh(context);
				assertThat(refresh.getAdaptiveRefreshTriggers()).isEmpty();
				assertThat(refresh.getRefreshPeriod()).isEqualTo(Duration.ofSeconds(10));
				assertThat(refresh.useDynamicRefreshSources()).isFalse();
			});
	}

	@Test
	void aSentinelConnectionIsLeftAlone() {
		this.runner
			.withPropertyValues("spring.data.redis.sentinel.master=mymaster",
					"spring.data.redis.sentinel.nodes=127.0.0.1:26379")
			.run(context -> {
				assertThat(clientOptions(context)).isNotInstanceOf(ClusterClientOptions.class);
				assertThat(readFrom(context)).isEmpty();
			});
	}

	@Test
	void aStandaloneConnectionIsLeftAlone() {
		this.runner.withPropertyValues("spring.data.redis.host=127.0.0.1").run(context -> {
			assertThat(clientOptions(context)).isNotInstanceOf(ClusterClientOptions.class);
			assertThat(readFrom(context)).isEmpty();
		});
	}

	private static Optional<ReadFrom> readFrom(ApplicationContext context) {
		return context.getBean(LettuceConnectionFactory.class).getClientConfiguration().getReadFrom();
	}

}
