package io.windowlimiter.gateway.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterEndpointAutoConfiguration;
import io.windowlimiter.core.operations.RateLimitsEndpoint;
import io.windowlimiter.gateway.operations.RateLimitsBodyAdvice;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * The {@code ratelimits} endpoint's answer to a POST body Boot refuses before the endpoint (a list or an object
 * as a value), on a reactive server, wherever the core made the endpoint.
 */
@AutoConfiguration(after = WindowRateLimiterEndpointAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBean(RateLimitsEndpoint.class)
public class WindowRateLimiterEndpointWebFluxAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	public RateLimitsBodyAdvice rateLimitsBodyAdvice() {
		return new RateLimitsBodyAdvice();
	}

}
