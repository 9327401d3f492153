package io.windowlimiter.gateway.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code window-rate-limiter.redis-timeout} is bounded: a settle the guard has not given up may be sent again
 * after a reconnect, and its marker in Redis lives a minute.
 */
class RedisTimeoutConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisReactiveAutoConfiguration.class, WindowRateLimiterCoreAutoConfiguration.class,
				WindowRateLimiterAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + RedisTestServer.get().host(),
				"spring.data.redis.port=" + RedisTestServer.get().port());

	@Test
	void aRedisTimeoutOverThirtySecondsStopsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("window-rate-limiter.redis-timeout=31s").run(context -> {
			assertThat(context).as("start-up must fail").hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()).getMessage())
				.contains("window-rate-limiter.redis-timeout is at most 30s, was PT31S");
		});
	}

	@Test
	void thirtySecondsStartsUp() {
		this.runner.withPropertyValues("window-rate-limiter.redis-timeout=30s")
			.run(context -> assertThat(context).hasNotFailed());
	}

}
