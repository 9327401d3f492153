package io.windowlimiter.gateway.dropin;

import java.util.Map;

import io.windowlimiter.gateway.LimiterFilterExchangeCapture;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The wrapped {@code RequestRateLimiter} factory makes filters that read as the gateway's own: its routes
 * endpoint lists a route's filters by their text, and adding the library must not change it.
 */
class LimiterFilterExchangeCaptureUnitTests {

	@Test
	void aCapturingFilterReadsAsTheGatewaysOwn() {
		RequestRateLimiterGatewayFilterFactory plain = new RequestRateLimiterGatewayFilterFactory(new Unused(),
				exchange -> Mono.just("key"));
		RequestRateLimiterGatewayFilterFactory wrapped = (RequestRateLimiterGatewayFilterFactory) new LimiterFilterExchangeCapture()
			.postProcessAfterInitialization(new RequestRateLimiterGatewayFilterFactory(new Unused(),
					exchange -> Mono.just("key")), "requestRateLimiterGatewayFilterFactory");
		GatewayFilter own = plain.apply(new RequestRateLimiterGatewayFilterFactory.Config().setStatusCode(
				org.springframework.http.HttpStatus.TOO_MANY_REQUESTS));
		GatewayFilter captured = wrapped.apply(new RequestRateLimiterGatewayFilterFactory.Config().setStatusCode(
				org.springframework.http.HttpStatus.TOO_MANY_REQUESTS));
		assertThat(captured).isNotSameAs(own);
		// the gateway's filter is a lambda: its text is its class and an identity hash, which differ per instance
		String ownClass = own.toString().substring(0, own.toString().indexOf('@'));
		assertThat(captured.toString()).startsWith(ownClass + "@").contains("RequestRateLimiter");
	}

	/** A limiter the filters are made with and never asked. */
	private static final class Unused implements RateLimiter<Object> {

		@Override
		public Mono<Response> isAllowed(String routeId, String id) {
			return Mono.just(new Response(true, Map.of()));
		}

		@Override
		public Map<String, Object> getConfig() {
			return Map.of();
		}

		@Override
		public Class<Object> getConfigClass() {
			return Object.class;
		}

		@Override
		public Object newConfig() {
			return new Object();
		}

	}

}
