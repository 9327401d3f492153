package io.windowlimiter.gateway.filter;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.gateway.test.ScriptedDownstream;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code WindowRateLimit} filter in a gateway from properties and the Java DSL, with a real Redis and a
 * real downstream: what is the WebFlux filter's own (the Java DSL, two filters on one route, a cost resolver, the deny
 * cache, Redis calls per request). What every gateway filter must do, on both servers, is
 * {@code WindowRateLimitFilterContract}'s ({@link WindowRateLimitFilterContractTests}). Each test has routes or API
 * keys of its own; windows are 366 days, so no window edge falls inside a test.
 */
@SpringBootTest(classes = { GatewayTestApplication.class, WindowRateLimitFilterTests.DslRoutes.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "window-rate-limiter.problem-details.enabled=true")
@AutoConfigureWebTestClient(timeout = "PT30S")
class WindowRateLimitFilterTests {

	static final ScriptedDownstream downstream = ScriptedDownstream.start();

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	@Autowired
	private WebTestClient client;

	@Autowired
	private RateLimiterCore core;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		route(registry, 0, "one", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "3", "window", "366d")));
		route(registry, 1, "two", List.of(
				Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "3", "window", "366d"),
				Map.of("id", "ip", "key-resolver", "#{@clientIpKeyResolver}", "limit", "5", "window", "366d")));
		route(registry, 2, "cost", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "cost-from-header", "X-Cost",
				"limits[0].limit", "10", "limits[0].window", "366d", "limits[1].limit", "5", "limits[1].window", "1d",
				"limits[1].algorithm", "fixed-window")));
		route(registry, 3, "resolved", List.of(Map.of("key-resolver", "#{@headerKeyResolver}",
				"cost-resolver", "#{@queryCost}", "cost-from-header", "X-Cost", "limit", "6", "window", "366d")));
		route(registry, 4, "login", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "2",
				"window", "366d", "algorithm", "sliding-log", "count-statuses", "401")));
		route(registry, 5, "refund", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "2",
				"window", "366d", "count-statuses", "1xx,2xx,3xx,4xx")));
		// as "two", for a test of its own: every test request has the same IP
		route(registry, 6, "later", List.of(
				Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "3", "window", "366d"),
				Map.of("id", "ip", "key-resolver", "#{@clientIpKeyResolver}", "limit", "5", "window", "366d")));
	}

	/** Route {@code /<id>/**} to the downstream with one WindowRateLimit filter per map of arguments. */
	static void route(DynamicPropertyRegistry registry, int index, String id, List<Map<String, String>> filters) {
		String route = ROUTES + "[" + index + "]";
		registry.add(route + ".id", () -> id);
		registry.add(route + ".uri", downstream::uri);
		registry.add(route + ".predicates[0]", () -> "Path=/" + id + "/**");
		for (int i = 0; i < filters.size(); i++) {
			String filter = route + ".filters[" + i + "]";
			registry.add(filter + ".name", () -> "WindowRateLimit");
			filters.get(i).forEach((name, value) -> registry.add(filter + ".args." + name, () -> value));
		}
	}

	/** As a user writes it: the factory and the resolver injected, the route's id given to the filter. */
	@Configuration(proxyBeanMethods = false)
	static class DslRoutes {

		@Bean
		RouteLocator dslRoutes(RouteLocatorBuilder builder, WindowRateLimitGatewayFilterFactory windowRateLimit,
				@Qualifier("headerKeyResolver") KeyResolver headerKeyResolver) {
			return builder.routes()
				.route("dsl", r -> r.path("/dsl/**")
					.filters(f -> f.filter(windowRateLimit.apply("dsl", c -> c.setKeyResolver(headerKeyResolver)
						.setAlgorithm("sliding-log")
						.setLimit("2")
						.setWindow("366d"))))
					.uri(downstream.uri()))
				.build();
		}

		/** The cost in the query, {@code ?cost=n}; none: the filter's cost header. */
		@Bean
		io.windowlimiter.gateway.CostResolver queryCost() {
			return exchange -> Mono.justOrEmpty(exchange.getRequest().getQueryParams().getFirst("cost")).map(Long::parseLong);
		}

	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private EntityExchangeResult<String> get(String path, String apiKey, String... headers) {
		WebTestClient.RequestHeadersSpec<?> request = this.client.get().uri(path).header("X-API-Key", apiKey);
		for (int i = 0; i < headers.length; i += 2) {
			request = request.header(headers[i], headers[i + 1]);
		}
		return request.exchange().expectBody(String.class).returnResult();
	}

	@Test
	void aJavaDslFilterIsLimitedByItsOwnPolicy() {
		String apiKey = UUID.randomUUID().toString();
		assertThat(get("/dsl/a", apiKey).getStatus().value()).isEqualTo(200);
		EntityExchangeResult<String> second = get("/dsl/a", apiKey);
		assertThat(second.getStatus().value()).isEqualTo(200);
		assertThat(second.getResponseHeaders().getFirst("RateLimit")).startsWith("\"dsl\";r=0;");
		assertThat(get("/dsl/a", apiKey).getStatus().value()).isEqualTo(429);
		assertThat(this.core.policies()).containsKey("dsl");
	}

	@Test
	void twoFiltersOnOneRouteAreBothEnforcedAndTheClosestLimitIsReported() {
		assertThat(this.core.policies()).containsKeys("two", "two@ip");
		String first = UUID.randomUUID().toString();
		String second = UUID.randomUUID().toString();
		// per key 3, per IP (every test request comes from 127.0.0.1) 5
		for (int i = 1; i <= 3; i++) {
			EntityExchangeResult<String> allowed = get("/two/a", first);
			assertThat(allowed.getStatus().value()).isEqualTo(200);
			assertThat(allowed.getResponseHeaders().getFirst("RateLimit")).startsWith("\"two\";r=" + (3 - i) + ";");
		}
		assertThat(get("/two/a", first).getStatus().value()).as("the key's limit").isEqualTo(429);
		assertThat(get("/two/a", second).getResponseHeaders().getFirst("RateLimit")).startsWith("\"two@ip\";r=1;");
		assertThat(get("/two/a", second).getResponseHeaders().getFirst("RateLimit")).startsWith("\"two@ip\";r=0;");
		EntityExchangeResult<String> denied = get("/two/a", second);
		assertThat(denied.getStatus().value()).as("the IP's limit").isEqualTo(429);
		assertThat(denied.getResponseHeaders().getFirst("RateLimit")).startsWith("\"two@ip\";r=0;");
		assertThat(denied.getResponseBody()).contains("\"violated-policies\":[\"two@ip\"]");
		assertThat(downstream.hits("/two/a")).isEqualTo(5);
	}

	@Test
	void aCachedDenialDoesNotRefuseACheaperRequestThatFits() {
		String apiKey = UUID.randomUUID().toString();
		assertThat(get("/cost/a", apiKey, "X-Cost", "3").getStatus().value()).isEqualTo(200);
		assertThat(get("/cost/a", apiKey, "X-Cost", "3").getStatus().value()).isEqualTo(429);
		// the denial of a cost of 3 is cached; 2 still fits what is left
		EntityExchangeResult<String> cheaper = get("/cost/a", apiKey, "X-Cost", "2");
		assertThat(cheaper.getStatus().value()).isEqualTo(200);
		assertThat(cheaper.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(get("/cost/a", apiKey, "X-Cost", "1").getStatus().value()).isEqualTo(429);
	}

	@Test
	void aCostResolverComesBeforeTheHeader() {
		String apiKey = UUID.randomUUID().toString();
		assertThat(get("/resolved/a?cost=4", apiKey, "X-Cost", "1").getResponseHeaders().getFirst("X-RateLimit-Remaining"))
			.isEqualTo("2");
		assertThat(get("/resolved/a", apiKey, "X-Cost", "2").getResponseHeaders().getFirst("X-RateLimit-Remaining"))
			.as("the resolver gave none: the header")
			.isEqualTo("0");
		EntityExchangeResult<String> tooMuch = get("/resolved/a?cost=7", apiKey);
		assertThat(tooMuch.getStatus().value()).isEqualTo(400);
		assertThat(tooMuch.getResponseBody()).contains("a whole number from 1 to 6");
	}

	private long remaining(String policyId, String apiKey) {
		return this.core.peek(policyId, apiKey).block().decisions().get(0).remaining();
	}

	@Test
	void aRequestALaterFilterRefusesIsNotChargedByTheEarlierOnes() {
		String first = UUID.randomUUID().toString();
		String second = UUID.randomUUID().toString();
		// per IP 5, shared by every test request: use it up with one key, then the other key is refused by it
		for (int i = 0; i < 5; i++) {
			assertThat(get("/later/b", (i < 3) ? first : second).getStatus().value()).isEqualTo(200);
		}
		long before = remaining("later", second);
		assertThat(before).isEqualTo(1);
		for (int i = 0; i < 3; i++) {
			assertThat(get("/later/b", second).getStatus().value()).isEqualTo(429);
		}
		assertThat(remaining("later", second)).as("the per-key limit gave back what the refused requests reserved")
			.isEqualTo(before);
	}

	@Test
	void upstreamErrorsAreRefundedWhenTheyDoNotCount() {
		String apiKey = UUID.randomUUID().toString();
		for (int i = 0; i < 4; i++) {
			assertThat(get("/refund/a", apiKey, ScriptedDownstream.STATUS, "503").getStatus().value()).isEqualTo(503);
		}
		assertThat(remaining("refund", apiKey)).isEqualTo(2);
		assertThat(get("/refund/a", apiKey, ScriptedDownstream.STATUS, "404").getStatus().value()).isEqualTo(404);
		assertThat(remaining("refund", apiKey)).isEqualTo(1);
	}

	/** Scripts Redis has run so far (EVALSHA and EVAL), from INFO commandstats. */
	private static long scriptCalls() {
		java.util.Properties stats = RedisTestServer.get()
			.template()
			.getConnectionFactory()
			.getReactiveConnection()
			.serverCommands()
			.info("commandstats")
			.block();
		long calls = 0;
		for (String command : List.of("cmdstat_evalsha", "cmdstat_eval")) {
			String value = stats.getProperty(command);
			if (value != null) {
				calls += Long.parseLong(value.replaceAll("^calls=(\\d+),.*$", "$1"));
			}
		}
		return calls;
	}

	@Test
	void aRouteWithoutResponseSettingsCostsOneRedisCallPerRequestAndSettlingOneMoreOnlyWhenTheCostChanges() {
		String apiKey = UUID.randomUUID().toString();
		long before = scriptCalls();
		for (int i = 0; i < 3; i++) {
			assertThat(get("/one/calls", apiKey).getStatus().value()).isEqualTo(200);
		}
		assertThat(scriptCalls() - before).as("no response settings: one script per request").isEqualTo(3);
		before = scriptCalls();
		assertThat(get("/login/calls", apiKey, ScriptedDownstream.STATUS, "401").getStatus().value()).isEqualTo(401);
		assertThat(scriptCalls() - before).as("a counted status: the reservation stands, nothing more").isEqualTo(1);
		before = scriptCalls();
		assertThat(get("/login/calls", apiKey).getStatus().value()).isEqualTo(200);
		assertThat(scriptCalls() - before).as("refunded: one settle").isEqualTo(2);
	}

}
