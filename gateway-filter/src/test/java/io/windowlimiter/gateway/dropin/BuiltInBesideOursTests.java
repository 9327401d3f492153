package io.windowlimiter.gateway.dropin;

import java.util.UUID;

import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An existing gateway, set up as the Spring Cloud Gateway docs set one up: a route of the built-in
 * limiter with {@code redis-rate-limiter.*} arguments and no {@code rate-limiter}, and the application's
 * only {@code KeyResolver} bean as the default. Adding the library and a route of ours beside it changes
 * nothing about the built-in route.
 */
@SpringBootTest(classes = { GatewayTestApplication.class, BuiltInBesideOursTests.UserBeans.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class BuiltInBesideOursTests {

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@Autowired
	private RequestRateLimiterGatewayFilterFactory filterFactory;

	@Autowired
	private KeyResolver userKeyResolver;

	/** The application's own and only key resolver, as the gateway docs write it. */
	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		KeyResolver userKeyResolver() {
			return exchange -> Mono.justOrEmpty(exchange.getRequest().getQueryParams().getFirst("user"));
		}

	}

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		String builtIn = ROUTES + "[0].";
		registry.add(builtIn + "id", () -> "builtin");
		registry.add(builtIn + "uri", downstream::uri);
		registry.add(builtIn + "predicates[0]", () -> "Path=/builtin/**");
		registry.add(builtIn + "filters[0].name", () -> "RequestRateLimiter");
		registry.add(builtIn + "filters[0].args.redis-rate-limiter.replenishRate", () -> "10");
		registry.add(builtIn + "filters[0].args.redis-rate-limiter.burstCapacity", () -> "20");
		registry.add(builtIn + "filters[0].args.redis-rate-limiter.requestedTokens", () -> "1");
		String ours = ROUTES + "[1].";
		registry.add(ours + "id", () -> "ours");
		registry.add(ours + "uri", downstream::uri);
		registry.add(ours + "predicates[0]", () -> "Path=/ours/**");
		registry.add(ours + "filters[0].name", () -> "RequestRateLimiter");
		registry.add(ours + "filters[0].args.rate-limiter", () -> "#{@windowRateLimiter}");
		registry.add(ours + "filters[0].args.key-resolver", () -> "#{@headerKeyResolver}");
		registry.add(ours + "filters[0].args.window-rate-limiter.limit", () -> "2");
		registry.add(ours + "filters[0].args.window-rate-limiter.window", () -> "366d");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	@Test
	void theFiltersDefaultsStayTheGatewaysLimiterAndTheUsersResolver() {
		assertThat(this.filterFactory.getDefaultRateLimiter()).isInstanceOf(RedisRateLimiter.class)
			.isNotInstanceOf(WindowRateLimiter.class);
		assertThat(this.filterFactory.getDefaultKeyResolver()).isSameAs(this.userKeyResolver);
	}

	@Test
	void theBuiltInRouteAnswersAsTheBuiltInLimiterDoes() {
		String user = UUID.randomUUID().toString();
		EntityExchangeResult<String> first = this.client.get()
			.uri("/builtin/items?user=" + user)
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(first.getStatus().value()).isEqualTo(200);
		assertThat(first.getResponseBody()).isEqualTo("downstream");
		HttpHeaders headers = first.getResponseHeaders();
		assertThat(headers.getFirst("X-RateLimit-Replenish-Rate")).isEqualTo("10");
		assertThat(headers.getFirst("X-RateLimit-Burst-Capacity")).isEqualTo("20");
		assertThat(headers.getFirst("X-RateLimit-Requested-Tokens")).isEqualTo("1");
		// a fresh client's bucket is full: burst - 1 left after its first request
		assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("19");
		assertThat(headers.containsHeader("RateLimit-Policy")).isFalse();
		assertThat(headers.containsHeader("X-RateLimit-Limit")).isFalse();
	}

	@Test
	void theBuiltInRouteKeysByTheUsersResolver() {
		// no ?user=: the user's resolver finds no key, and the gateway's deny-empty-key rule answers
		int before = downstream.total();
		assertThat(this.client.get().uri("/builtin/items").header("X-API-Key", "present").exchange()
			.returnResult(String.class).getStatus().value()).isEqualTo(403);
		assertThat(downstream.total()).isEqualTo(before);
	}

	@Test
	void ourRouteBesideItIsLimitedByOurs() {
		String apiKey = UUID.randomUUID().toString();
		for (int i = 1; i <= 2; i++) {
			EntityExchangeResult<String> allowed = ours(apiKey);
			assertThat(allowed.getStatus().value()).isEqualTo(200);
			assertThat(allowed.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"ours\";q=2;w=31622400");
			assertThat(allowed.getResponseHeaders().containsHeader("X-RateLimit-Replenish-Rate")).isFalse();
		}
		EntityExchangeResult<String> denied = ours(apiKey);
		assertThat(denied.getStatus().value()).isEqualTo(429);
		assertThat(denied.getResponseHeaders().getFirst("Retry-After")).isNotNull();
		assertThat(downstream.hits("/ours/items", apiKey)).isEqualTo(2);
	}

	private EntityExchangeResult<String> ours(String apiKey) {
		return this.client.get().uri("/ours/items").header("X-API-Key", apiKey).exchange().expectBody(String.class)
			.returnResult();
	}

}
