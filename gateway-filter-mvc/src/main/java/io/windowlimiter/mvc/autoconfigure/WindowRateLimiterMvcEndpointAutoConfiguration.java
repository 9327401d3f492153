package io.windowlimiter.mvc.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterEndpointAutoConfiguration;
import io.windowlimiter.core.operations.RateLimitsEndpoint;
import io.windowlimiter.mvc.operations.RateLimitsBodyMvcAdvice;
import io.windowlimiter.mvc.operations.RateLimitsServletEndpointExtension;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * The {@code ratelimits} endpoint's per-client operations answered with their values on a servlet server, and
 * a POST body Boot cannot hand to it answered naming the field, wherever the core made the endpoint ({@link WindowRateLimiterEndpointAutoConfiguration}).
 */
@AutoConfiguration(after = WindowRateLimiterEndpointAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBean(RateLimitsEndpoint.class)
public class WindowRateLimiterMvcEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	public RateLimitsServletEndpointExtension rateLimitsServletEndpointExtension(RateLimitsEndpoint endpoint) {
		return new RateLimitsServletEndpointExtension(endpoint);
	}

	/** A POST body Boot refuses before the endpoint (a list or an object as a value), answered naming the field. */
	@Bean
	@ConditionalOnMissingBean
	public RateLimitsBodyMvcAdvice rateLimitsBodyMvcAdvice() {
		return new RateLimitsBodyMvcAdvice();
	}

}
