package io.windowlimiter.gateway;

import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.gateway.test.DocsSamples;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shadow mode, several limits on one route, request cost, problem details and metrics, through the
 * gateway with a real Redis and a real downstream. Windows are 366 days: no edge inside a test.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "window-rate-limiter.problem-details.enabled=true")
@AutoConfigureWebTestClient(timeout = "PT30S")
@Import(OperationsTests.Metrics.class)
class OperationsTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@Autowired
	private MeterRegistry registry;

	@Autowired
	private io.windowlimiter.core.RateLimiterCore core;

	@TestConfiguration
	static class Metrics {

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		route(registry, 0, "shadow", "window-rate-limiter.limit=2", "window-rate-limiter.window=366d",
				"window-rate-limiter.shadow=true");
		route(registry, 1, "multi", "window-rate-limiter.algorithm=fixed-window",
				"window-rate-limiter.limits[0].limit=5", "window-rate-limiter.limits[0].window=366d",
				"window-rate-limiter.limits[0].name=yearly", "window-rate-limiter.limits[1].limit=3",
				"window-rate-limiter.limits[1].window=365d", "window-rate-limiter.limits[1].algorithm=sliding-log",
				"window-rate-limiter.limits[1].name=burst");
		route(registry, 2, "cost", "window-rate-limiter.limit=5", "window-rate-limiter.window=366d",
				"window-rate-limiter.cost=2");
	}

	private static void route(DynamicPropertyRegistry registry, int index, String id, String... args) {
		TestRoutes.route(registry, index, id, downstream, args);
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private EntityExchangeResult<String> get(String path, String apiKey) {
		return this.client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody(String.class).returnResult();
	}

	private double count(String route, String outcome) {
		return this.registry.find("gateway.ratelimit.decisions")
			.tags("route", route, "outcome", outcome)
			.counters()
			.stream()
			.mapToDouble(counter -> counter.count())
			.sum();
	}

	@Test
	void shadowModeDecidesAndCountsButNeverBlocks() {
		String apiKey = UUID.randomUUID().toString();
		double shadowedBefore = count("shadow", "shadowed");
		for (int i = 0; i < 5; i++) {
			EntityExchangeResult<String> result = get("/shadow/a", apiKey);
			assertThat(result.getStatus().value()).isEqualTo(200);
			assertThat(result.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo(i < 2 ? "" + (1 - i) : "0");
			assertThat(result.getResponseHeaders().containsHeader("Retry-After")).isFalse();
		}
		assertThat(downstream.hits("/shadow/a", apiKey)).isEqualTo(5);
		assertThat(count("shadow", "shadowed") - shadowedBefore).isEqualTo(3);
	}

	@Test
	void severalLimitsDecideTogetherAndReportTheClosestToRunningOut() {
		String apiKey = UUID.randomUUID().toString();
		EntityExchangeResult<String> first = get("/multi/a", apiKey);
		assertThat(first.getResponseHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"yearly\";q=5;w=31622400, \"burst\";q=3;w=31536000");
		assertThat(first.getResponseHeaders().getFirst("RateLimit")).startsWith("\"burst\";r=2;");
		assertThat(first.getResponseHeaders().getFirst("X-RateLimit-Limit")).isEqualTo("3");
		get("/multi/a", apiKey);
		get("/multi/a", apiKey);
		EntityExchangeResult<String> denied = get("/multi/a", apiKey);
		assertThat(denied.getStatus().value()).isEqualTo(429);
		assertThat(denied.getResponseHeaders().getFirst("RateLimit")).startsWith("\"burst\";r=0;");
		assertThat(downstream.hits("/multi/a", apiKey)).isEqualTo(3);
		// the yearly limit counted only the three that passed (an X-API-Key is a credential, kept as its hash)
		String yearly = RedisTestServer.get().template().opsForValue()
			.get(io.windowlimiter.core.key.RedisKeys.of("multi", this.core.clientKeyOf("multi", apiKey), "fl"))
			.block();
		// the fixed window's index since 2025, its length 316224 * 10^5 ms, then count 3 (a window of 366
		// days: the window edge this might straddle is once a year)
		long window = 31_622_400_000L;
		assertThat(yearly).isEqualTo(
				(System.currentTimeMillis() / window - 1_735_689_600_000L / window) + "316224" + "3" + "651");
	}

	@Test
	void aRefusalCarriesProblemDetailsNamingTheViolatedPolicies() {
		String apiKey = UUID.randomUUID().toString();
		for (int i = 0; i < 3; i++) {
			get("/multi/b", apiKey);
		}
		EntityExchangeResult<String> denied = get("/multi/b", apiKey);
		assertThat(denied.getStatus().value()).isEqualTo(429);
		assertThat(denied.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(denied.getResponseBody()).isEqualTo("{\"type\":\"https://iana.org/assignments/http-problem-types"
				+ "#quota-exceeded\",\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\","
				+ "\"status\":429,\"violated-policies\":[\"burst\"]}");
		DocsSamples.Answer sample = DocsSamples.answer("docs/configuration.md", "quota-exceeded");
		DocsSamples.assertSameShape("docs/configuration.md:" + sample.line(), sample.json(), denied.getResponseBody(),
				sample.varying());
		assertThat(denied.getResponseHeaders().containsHeader(ProblemDetailsFilter.VIOLATED)).isFalse();
		assertThat(denied.getResponseHeaders().getFirst("Retry-After")).isNotNull();
		// an allowed answer is untouched
		EntityExchangeResult<String> allowed = get("/multi/b", UUID.randomUUID().toString());
		assertThat(allowed.getResponseBody()).isEqualTo("downstream");
	}

	@Test
	void eachRequestConsumesTheRouteCost() {
		String apiKey = UUID.randomUUID().toString();
		assertThat(get("/cost/a", apiKey).getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("3");
		assertThat(get("/cost/a", apiKey).getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("1");
		EntityExchangeResult<String> denied = get("/cost/a", apiKey);
		assertThat(denied.getStatus().value()).isEqualTo(429);
		assertThat(denied.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("1");
	}

	@Test
	void decisionsAndRedisRoundTripsAreMeasured() {
		String apiKey = UUID.randomUUID().toString();
		double allowedBefore = count("cost", "allowed");
		double deniedBefore = count("cost", "denied");
		for (int i = 0; i < 4; i++) {
			get("/cost/b", apiKey);
		}
		assertThat(count("cost", "allowed") - allowedBefore).isEqualTo(2);
		assertThat(count("cost", "denied") - deniedBefore).isEqualTo(2);
		assertThat(this.registry.find("gateway.ratelimit.decisions").tags("route", "multi").counters())
			.allSatisfy(counter -> assertThat(counter.getId().getTag("algorithm")).isEqualTo("fixed-window+sliding-log"));
		assertThat(this.registry.find("gateway.ratelimit.redis").tag("route", "cost").timer().count()).isPositive();
	}

}
