package io.windowlimiter.gateway.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterHealthAutoConfiguration;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import io.windowlimiter.core.operations.RateLimiterHealthIndicator;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/** The limiter's health indicator is there with Boot's health support, and can be turned off. */
class WindowRateLimiterHealthAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WindowRateLimiterCoreAutoConfiguration.class, WindowRateLimiterAutoConfiguration.class,
				WindowRateLimiterHealthAutoConfiguration.class))
		.withBean(ReactiveStringRedisTemplate.class, () -> RedisTestServer.get().template());

	@Test
	void withHealthSupportTheIndicatorIsThere() {
		this.runner.run(context -> assertThat(context).hasSingleBean(RateLimiterHealthIndicator.class)
			.hasBean("windowRateLimiterHealthIndicator"));
	}

	@Test
	void offByProperty() {
		this.runner.withPropertyValues("management.health.window-rate-limiter.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean(RateLimiterHealthIndicator.class));
	}

	@Test
	void withoutHealthSupportTheLimiterStillStarts() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimiterHealthIndicator.class));
	}

}
