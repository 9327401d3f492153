package io.windowlimiter.core.autoconfigure;

import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.operations.RateLimiterHealthIndicator;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The limiter's health indicator ({@code windowRateLimiter}), where Boot's health support is on the
 * classpath; off with {@code management.health.window-rate-limiter.enabled=false}.
 */
@AutoConfiguration(after = WindowRateLimiterCoreAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean({ RedisGuard.class, PolicyRegistry.class })
@ConditionalOnEnabledHealthIndicator("window-rate-limiter")
public class WindowRateLimiterHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	public RateLimiterHealthIndicator windowRateLimiterHealthIndicator(RedisGuard guard, PolicyRegistry registry) {
		return new RateLimiterHealthIndicator(guard, registry);
	}

}
