package io.windowlimiter.gateway.dropin;

import java.util.Map;
import java.util.UUID;

import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway whose application already made its own limiter and key resolver {@code @Primary} (beside
 * a second resolver) starts with the library added; its routes keep its beans, ours use ours.
 */
@SpringBootTest(classes = { GatewayTestApplication.class, OwnPrimaryBeansTests.UserBeans.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class OwnPrimaryBeansTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		/** Allows everything and says so, so a test can see which limiter decided. */
		@Bean
		@Primary
		RateLimiter<Object> ownRateLimiter() {
			return new RateLimiter<>() {

				@Override
				public Mono<Response> isAllowed(String routeId, String id) {
					return Mono.just(new Response(true, Map.of("X-Own-Limiter", id)));
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

			};
		}

		@Bean
		@Primary
		KeyResolver ownKeyResolver() {
			return exchange -> Mono.just("own-key");
		}

		@Bean
		KeyResolver otherKeyResolver() {
			return exchange -> Mono.just("other-key");
		}

	}

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		String own = "spring.cloud.gateway.server.webflux.routes[0].";
		registry.add(own + "id", () -> "own");
		registry.add(own + "uri", downstream::uri);
		registry.add(own + "predicates[0]", () -> "Path=/own/**");
		registry.add(own + "filters[0]", () -> "RequestRateLimiter");
		TestRoutes.route(registry, 1, "ours", downstream, "window-rate-limiter.limit=1",
				"window-rate-limiter.window=366d");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	@Test
	void theApplicationsRouteKeepsItsOwnPrimaryLimiterAndResolver() {
		EntityExchangeResult<String> result = this.client.get().uri("/own/items").exchange()
			.expectBody(String.class).returnResult();
		assertThat(result.getStatus().value()).isEqualTo(200);
		assertThat(result.getResponseHeaders().getFirst("X-Own-Limiter")).isEqualTo("own-key");
	}

	@Test
	void ourRouteIsLimitedByOurs() {
		String apiKey = UUID.randomUUID().toString();
		assertThat(get("/ours/items", apiKey).getStatus().value()).isEqualTo(200);
		EntityExchangeResult<String> denied = get("/ours/items", apiKey);
		assertThat(denied.getStatus().value()).isEqualTo(429);
		assertThat(denied.getResponseHeaders().containsHeader("X-Own-Limiter")).isFalse();
	}

	private EntityExchangeResult<String> get(String path, String apiKey) {
		return this.client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody(String.class)
			.returnResult();
	}

}
