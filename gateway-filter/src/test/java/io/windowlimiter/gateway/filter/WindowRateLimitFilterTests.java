package io.windowlimiter.gateway.filter;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.DocsSamples;
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
import org.springframework.http.HttpHeaders;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code WindowRateLimit} filter in a gateway from properties and the Java DSL, with a real Redis and a
 * real downstream. Each test has routes or API keys of its own; windows are 366 days, so no window edge
 * falls inside a test.
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
		route(registry, 4, "status", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "1",
				"window", "366d", "status-code", "503")));
		route(registry, 5, "login", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "2",
				"window", "366d", "algorithm", "sliding-log", "count-statuses", "401")));
		route(registry, 6, "refund", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "2",
				"window", "366d", "count-statuses", "1xx,2xx,3xx,4xx")));
		route(registry, 7, "metered", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "10",
				"window", "366d", "algorithm", "fixed-window", "cost-from-response-header", ScriptedDownstream.COST)));
		// as "two", for a test of its own: every test request has the same IP
		route(registry, 8, "later", List.of(
				Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "3", "window", "366d"),
				Map.of("id", "ip", "key-resolver", "#{@clientIpKeyResolver}", "limit", "5", "window", "366d")));
		// what RequestRateLimiter routes take beside their limits: a calendar quota, a penalty, lists
		route(registry, 9, "monthly", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "1",
				"calendar", "month", "time-zone", "Pacific/Kiritimati", "quota-status", "403", "name", "monthly")));
		route(registry, 10, "penalty", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "1",
				"window", "1s", "block-for", "10m", "deny", "banned-key", "allow", "vip-key")));
		// a request without X-API-Key: refused (with its status), or counted with the others under one key
		route(registry, 11, "keyless-refused", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "2",
				"window", "366d", "empty-key-status", "401")));
		route(registry, 12, "keyless", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "2",
				"window", "366d", "deny-empty-key", "false")));
		// the README's smallest route, for its answer to a request without X-API-Key
		route(registry, 13, "keyless-default", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "100",
				"window", "1m")));
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
	void aFilterFromPropertiesLimitsWithTheHeadersAndTheProblemBodyOfToday() {
		String apiKey = UUID.randomUUID().toString();
		for (int i = 1; i <= 3; i++) {
			EntityExchangeResult<String> allowed = get("/one/a", apiKey);
			assertThat(allowed.getStatus().value()).isEqualTo(200);
			HttpHeaders headers = allowed.getResponseHeaders();
			assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("3");
			assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
			assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"one\";q=3;w=31622400");
			assertThat(headers.containsHeader("Retry-After")).isFalse();
		}
		EntityExchangeResult<String> denied = get("/one/a", apiKey);
		assertThat(denied.getStatus().value()).isEqualTo(429);
		HttpHeaders headers = denied.getResponseHeaders();
		assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(Long.parseLong(headers.getFirst("Retry-After"))).isPositive();
		assertThat(headers.getFirst("RateLimit")).startsWith("\"one\";r=0;t=");
		assertThat(headers.getContentType().toString()).isEqualTo("application/problem+json");
		assertThat(denied.getResponseBody()).contains("\"status\":429", "\"violated-policies\":[\"one\"]");
		assertThat(headers.containsHeader("X-Window-Rate-Limiter-Violated")).isFalse();
		assertThat(downstream.hits("/one/a")).isEqualTo(3);
	}

	@Test
	void aCalendarQuotaAPenaltyAndListsWorkOnTheFilterAsOnRequestRateLimiterRoutes() throws InterruptedException {
		String apiKey = UUID.randomUUID().toString();
		assertThat(get("/monthly/a", apiKey).getStatus().value()).isEqualTo(200);
		EntityExchangeResult<String> quota = get("/monthly/a", apiKey);
		assertThat(quota.getStatus().value()).as("the quota-status").isEqualTo(403);
		assertThat(quota.getResponseBody()).contains("\"status\":403", "\"violated-policies\":[\"monthly\"]");
		java.time.ZonedDateTime now = java.time.ZonedDateTime.now(java.time.ZoneId.of("Pacific/Kiritimati"));
		long untilMonthEnd = java.time.Duration.between(now,
				now.toLocalDate().withDayOfMonth(1).plusMonths(1).atStartOfDay(now.getZone())).toSeconds();
		assertThat(Long.parseLong(quota.getResponseHeaders().getFirst("Retry-After"))).isBetween(untilMonthEnd - 5,
				untilMonthEnd + 5);

		String penalised = UUID.randomUUID().toString();
		assertThat(get("/penalty/a", penalised).getStatus().value()).isEqualTo(200);
		EntityExchangeResult<String> blocked = get("/penalty/a", penalised);
		assertThat(blocked.getStatus().value()).isEqualTo(429);
		assertThat(Long.parseLong(blocked.getResponseHeaders().getFirst("Retry-After"))).as("the penalty's")
			.isBetween(590L, 600L);
		Thread.sleep(1_100);
		assertThat(get("/penalty/a", penalised).getStatus().value()).as("blocked past the 1 s window").isEqualTo(429);

		EntityExchangeResult<String> denied = get("/penalty/a", "banned-key");
		assertThat(denied.getStatus().value()).isEqualTo(403);
		assertThat(denied.getResponseBody()).contains("\"status\":403").doesNotContain("violated-policies");
		for (int i = 0; i < 3; i++) {
			assertThat(get("/penalty/a", "vip-key").getStatus().value()).as("allowed: never limited").isEqualTo(200);
		}
		assertThat(downstream.hits("/penalty/a")).isEqualTo(4);
	}

	/**
	 * A request without a key is refused with {@code empty-key-status} and a problem-details body naming what
	 * was missing (it was a bare status: the client could not tell why); with {@code deny-empty-key: false} every
	 * keyless request of the route counts under one shared key, the one the Server MVC filter uses too.
	 */
	@Test
	void aKeylessRequestIsRefusedOrLimitedWithTheOthersUnderOneKey() {
		EntityExchangeResult<String> refused = this.client.get().uri("/keyless-refused/a").exchange()
			.expectBody(String.class).returnResult();
		assertThat(refused.getStatus().value()).isEqualTo(401);
		assertThat(refused.getResponseHeaders().getContentType()).hasToString("application/problem+json");
		assertThat(refused.getResponseBody()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Unauthorized\","
				+ "\"status\":401,\"detail\":\"This route counts requests per client by the X-API-Key header, and the "
				+ "request has none; send it\"}");
		assertThat(downstream.hits("/keyless-refused/a")).isZero();
		EntityExchangeResult<String> byDefault = this.client.get().uri("/keyless-default/a").exchange()
			.expectBody(String.class).returnResult();
		assertThat(byDefault.getStatus().value()).isEqualTo(403);
		DocsSamples.Answer sample = DocsSamples.answer("README.md", "missing-key");
		DocsSamples.assertSameShape("README.md:" + sample.line(), sample.json(), byDefault.getResponseBody(),
				sample.varying());
		for (int i = 1; i <= 2; i++) {
			EntityExchangeResult<String> allowed = this.client.get().uri("/keyless/a").exchange()
				.expectBody(String.class).returnResult();
			assertThat(allowed.getStatus().value()).isEqualTo(200);
			assertThat(allowed.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo(Integer.toString(2 - i));
		}
		EntityExchangeResult<String> denied = this.client.get().uri("/keyless/a").exchange()
			.expectBody(String.class).returnResult();
		assertThat(denied.getStatus().value()).as("the third keyless request").isEqualTo(429);
		assertThat(denied.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(denied.getResponseHeaders().getFirst("Retry-After")).isNotNull();
		assertThat(downstream.hits("/keyless/a")).isEqualTo(2);
		assertThat(RedisTestServer.get().template().keys("wrl:{____EMPTY_KEY__}:keyless:*").collectList()
			.block(Duration.ofSeconds(5))).as("the shared key in Redis").isNotEmpty();
	}

	@Test
	void aConfiguredStatusAnswersRefusals() {
		String apiKey = UUID.randomUUID().toString();
		assertThat(get("/status/a", apiKey).getStatus().value()).isEqualTo(200);
		EntityExchangeResult<String> denied = get("/status/a", apiKey);
		assertThat(denied.getStatus().value()).isEqualTo(503);
		assertThat(denied.getResponseHeaders().getFirst("Retry-After")).isNotNull();
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
	void aCostFromAHeaderIsChargedToEveryLimit() {
		String apiKey = UUID.randomUUID().toString();
		EntityExchangeResult<String> four = get("/cost/a", apiKey, "X-Cost", "4");
		assertThat(four.getStatus().value()).isEqualTo(200);
		assertThat(four.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(get("/cost/a", apiKey).getResponseHeaders().getFirst("X-RateLimit-Remaining"))
			.as("no header: the filter's cost, 1")
			.isEqualTo("0");
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
	void aBadCostHeaderIsA400NamingTheHeaderAndNeverFree() {
		String apiKey = UUID.randomUUID().toString();
		for (String bad : List.of("0", "-1", "abc", "1.5", "+2", "", "99999999999999999999", "6")) {
			EntityExchangeResult<String> answer = get("/cost/bad", apiKey, "X-Cost", bad);
			assertThat(answer.getStatus().value()).as("X-Cost: '%s'", bad).isEqualTo(400);
			assertThat(answer.getResponseHeaders().getContentType().toString()).isEqualTo("application/problem+json");
			assertThat(answer.getResponseBody()).contains("\"status\":400", "\"header\":\"X-Cost\"", "X-Cost is '");
		}
		assertThat(get("/cost/bad", apiKey, "X-Cost", "6").getResponseBody())
			.contains("more than this route allows at once", "a whole number from 1 to 5");
		EntityExchangeResult<String> twice = this.client.get()
			.uri("/cost/bad")
			.header("X-API-Key", apiKey)
			.header("X-Cost", "1", "5")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(twice.getStatus().value()).isEqualTo(400);
		assertThat(twice.getResponseBody()).contains("X-Cost is sent 2 times");
		assertThat(downstream.hits("/cost/bad")).isZero();
		assertThat(get("/cost/bad", apiKey, "X-Cost", "5").getResponseHeaders().getFirst("X-RateLimit-Remaining"))
			.as("nothing was charged for the bad requests")
			.isEqualTo("0");
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
	void onlyCountedStatusesUseTheQuota() {
		String apiKey = UUID.randomUUID().toString();
		for (int i = 0; i < 5; i++) {
			assertThat(get("/login/a", apiKey).getStatus().value()).as("successful logins are refunded").isEqualTo(200);
		}
		assertThat(get("/login/a", apiKey, ScriptedDownstream.STATUS, "401").getStatus().value()).isEqualTo(401);
		assertThat(get("/login/a", apiKey, ScriptedDownstream.STATUS, "401").getStatus().value()).isEqualTo(401);
		assertThat(get("/login/a", apiKey, ScriptedDownstream.STATUS, "401").getStatus().value()).isEqualTo(429);
		assertThat(get("/login/a", apiKey).getStatus().value()).as("refused, whatever it would have answered")
			.isEqualTo(429);
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

	@Test
	void theUpstreamsCostHeaderSettlesTheReservation() {
		String apiKey = UUID.randomUUID().toString();
		assertThat(get("/metered/a", apiKey, ScriptedDownstream.COST, "4").getStatus().value()).isEqualTo(200);
		assertThat(remaining("metered", apiKey)).isEqualTo(6);
		assertThat(get("/metered/a", apiKey, ScriptedDownstream.COST, "0").getStatus().value()).isEqualTo(200);
		assertThat(remaining("metered", apiKey)).as("a cost of 0 gives the reservation back").isEqualTo(6);
		assertThat(get("/metered/a", apiKey).getStatus().value()).isEqualTo(200);
		assertThat(remaining("metered", apiKey)).as("no header: charged what was reserved").isEqualTo(5);
		assertThat(get("/metered/a", apiKey, ScriptedDownstream.COST, "30").getStatus().value()).isEqualTo(200);
		assertThat(remaining("metered", apiKey)).as("charged past the limit").isZero();
		assertThat(get("/metered/a", apiKey).getStatus().value()).isEqualTo(429);
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
