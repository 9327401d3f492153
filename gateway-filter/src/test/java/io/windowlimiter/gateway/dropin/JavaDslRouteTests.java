package io.windowlimiter.gateway.dropin;

import java.util.Map;
import java.util.UUID;

import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A route built with the Java DSL gets its limits from {@link WindowRateLimiter#register}, checked as a
 * YAML route's are: it is limited end to end, and a bad one stops start-up with the same message.
 */
@SpringBootTest(classes = { GatewayTestApplication.class, JavaDslRouteTests.DslRoutes.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class JavaDslRouteTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	/** As a user writes it: the limiter and resolver injected by name, the limits beside the route. */
	@Configuration(proxyBeanMethods = false)
	static class DslRoutes {

		@Bean
		RouteLocator dslRoutes(RouteLocatorBuilder builder,
				@Qualifier(WindowRateLimiter.BEAN_NAME) WindowRateLimiter windowRateLimiter,
				@Qualifier("headerKeyResolver") KeyResolver headerKeyResolver) {
			return builder.routes()
				.route("dsl", r -> r.path("/dsl/**")
					.filters(f -> f.requestRateLimiter(c -> c
						.setRateLimiter(windowRateLimiter.register("dsl",
								Map.of("algorithm", "sliding-log", "limit", 2, "window", "366d")))
						.setKeyResolver(headerKeyResolver)))
					.uri(downstream.uri()))
				.build();
		}

	}

	/** A DSL route whose limit is zero. */
	@Configuration(proxyBeanMethods = false)
	static class BadDslRoute {

		@Bean
		RouteLocator badDslRoutes(RouteLocatorBuilder builder,
				@Qualifier(WindowRateLimiter.BEAN_NAME) WindowRateLimiter windowRateLimiter) {
			return builder.routes()
				.route("bad", r -> r.path("/bad/**")
					.filters(f -> f.requestRateLimiter(c -> c.setRateLimiter(windowRateLimiter.register("bad",
							Map.of("window-rate-limiter.limit", "0", "window-rate-limiter.window", "1m")))))
					.uri("http://127.0.0.1:9"))
				.build();
		}

	}

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	@Test
	void theDslRouteIsLimitedByItsRegisteredPolicy() {
		String apiKey = UUID.randomUUID().toString();
		for (int i = 1; i <= 2; i++) {
			EntityExchangeResult<String> allowed = get(apiKey);
			assertThat(allowed.getStatus().value()).isEqualTo(200);
			assertThat(allowed.getResponseBody()).isEqualTo("downstream");
			HttpHeaders headers = allowed.getResponseHeaders();
			assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"dsl\";q=2;w=31622400");
			assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo(Integer.toString(2 - i));
		}
		EntityExchangeResult<String> denied = get(apiKey);
		assertThat(denied.getStatus().value()).isEqualTo(429);
		assertThat(Long.parseLong(denied.getResponseHeaders().getFirst("Retry-After"))).isPositive();
		assertThat(downstream.hits("/dsl/items", apiKey)).isEqualTo(2);
	}

	@Test
	void aBadDslRouteStopsStartUpWithTheMessageAYamlRouteGets() {
		RedisTestServer redis = RedisTestServer.get();
		Throwable thrown = catchThrowable(() -> new SpringApplicationBuilder(GatewayTestApplication.class,
				BadDslRoute.class)
			.properties(GatewayTestApplication.QUIET_REFUSAL)
			.properties("server.port=0", "spring.data.redis.host=" + redis.host(),
					"spring.data.redis.port=" + redis.port())
			.run()
			.close());
		assertThat(thrown).as("start-up must fail").isNotNull();
		assertThat(NestedExceptionUtils.getMostSpecificCause(thrown))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'bad': window-rate-limiter.limit is '0'; allowed: "
					+ "a whole number from 1 to 1000000000");
	}

	@Test
	void aRouteIsRegisteredOnce(@Autowired @Qualifier(WindowRateLimiter.BEAN_NAME) WindowRateLimiter limiter) {
		assertThat(catchThrowable(() -> limiter.register("dsl", Map.of("limit", 5, "window", "1m"))))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'dsl': RequestRateLimiter with windowRateLimiter "
					+ "is registered twice; allowed: one per route");
	}

	private EntityExchangeResult<String> get(String apiKey) {
		return this.client.get().uri("/dsl/items").header("X-API-Key", apiKey).exchange().expectBody(String.class)
			.returnResult();
	}

}
