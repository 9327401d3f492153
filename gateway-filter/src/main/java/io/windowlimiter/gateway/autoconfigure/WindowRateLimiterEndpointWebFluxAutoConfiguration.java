package io.windowlimiter.gateway.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterEndpointAutoConfiguration;
import io.windowlimiter.core.operations.RateLimitsEndpoint;
import io.windowlimiter.gateway.operations.RateLimitsBodyAdvice;
import io.windowlimiter.gateway.operations.RateLimitsBodyFilter;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * The {@code ratelimits} endpoint's answer to a POST body Boot refuses before the endpoint (a list or an object
 * as a value), and its refusal of a body with an unknown or a duplicated field, on a reactive server, wherever
 * the core made the endpoint.
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

	/** A POST body with a field the endpoint does not take, or one field twice: 400 naming it, nothing applied. */
	@Bean
	@ConditionalOnMissingBean
	public RateLimitsBodyFilter rateLimitsBodyFilter(ObjectProvider<PathMappedEndpoints> endpoints) {
		return new RateLimitsBodyFilter(new EndpointPath(endpoints));
	}

	/** The endpoint's path, as Boot maps it (base path, path mapping), read once Boot has mapped the endpoints. */
	static final class EndpointPath implements java.util.function.Supplier<String> {

		private final ObjectProvider<PathMappedEndpoints> endpoints;

		private volatile @Nullable String path;

		EndpointPath(ObjectProvider<PathMappedEndpoints> endpoints) {
			this.endpoints = endpoints;
		}

		@Override
		public String get() {
			String known = this.path;
			if (known == null) {
				PathMappedEndpoints mapped = this.endpoints.getIfAvailable();
				String mappedPath = (mapped != null) ? mapped.getPath(EndpointId.of(RateLimitsEndpoint.ID)) : null;
				known = (mappedPath != null) ? mappedPath : "/actuator/" + RateLimitsEndpoint.ID;
				this.path = known;
			}
			return known;
		}

	}

}
