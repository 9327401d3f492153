package io.windowlimiter.gateway;

import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import io.windowlimiter.gateway.autoconfigure.WindowRateLimiterAutoConfiguration;
import io.windowlimiter.gateway.test.DocsSamples;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Allow and deny lists through the gateway's {@code RequestRateLimiter} filter (the SPI adapter) with a real
 * Redis and downstream: per route and for all routes, by client key and by the client-IP resolver's keys;
 * a refusal is a 403 with an about:blank problem body, not the filter's 429; near-limit is counted. And
 * start-up refusing bad gateway-wide entries and a bad share, naming the property and what is allowed.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "window-rate-limiter.problem-details.enabled=true", "window-rate-limiter.allow=vip,10.9.0.0/16",
				"window-rate-limiter.deny=banned", "window-rate-limiter.near-limit.share=0.5" })
@AutoConfigureWebTestClient(timeout = "PT30S")
@Import(AccessListGatewayTests.Metrics.class)
class AccessListGatewayTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@Autowired
	private MeterRegistry registry;

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
		TestRoutes.route(registry, 0, "listed", downstream, "window-rate-limiter.limit=2",
				"window-rate-limiter.window=366d", "window-rate-limiter.deny=abuser,vip",
				"window-rate-limiter.allow=partner");
		TestRoutes.route(registry, 1, "by-ip-denied", downstream, "key-resolver=#{@clientIpKeyResolver}",
				"window-rate-limiter.limit=100", "window-rate-limiter.window=366d",
				"window-rate-limiter.deny=127.0.0.0/8,::1");
		TestRoutes.route(registry, 2, "by-ip-allowed", downstream, "key-resolver=#{@clientIpKeyResolver}",
				"window-rate-limiter.limit=1", "window-rate-limiter.window=366d",
				"window-rate-limiter.allow.0=127.0.0.1", "window-rate-limiter.allow.1=::1/128");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private EntityExchangeResult<String> get(String path, String apiKey) {
		return this.client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody(String.class).returnResult();
	}

	private double count(String name, String route, String... tags) {
		return this.registry.find(name).tags("route", route).tags(tags).counters().stream()
			.mapToDouble(counter -> counter.count()).sum();
	}

	@Test
	void aDeniedClientGets403WithAProblemBodyAndNeverReachesTheDownstream() {
		for (String key : new String[] { "abuser", "banned" }) {
			EntityExchangeResult<String> denied = get("/listed/a", key);
			assertThat(denied.getStatus().value()).as(key).isEqualTo(403);
			assertThat(denied.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
			assertThat(denied.getResponseBody()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Forbidden\","
					+ "\"status\":403,\"detail\":\"This client may not use this route: it is on a deny list or blocked by "
					+ "an operator\"}");
			DocsSamples.Answer sample = DocsSamples.answer("docs/lists-and-near-limit.md", "denied");
			DocsSamples.assertSameShape("docs/lists-and-near-limit.md:" + sample.line(), sample.json(),
					denied.getResponseBody(), sample.varying());
			assertThat(denied.getResponseHeaders().containsHeader("Retry-After")).isFalse();
			assertThat(denied.getResponseHeaders().containsHeader(ProblemDetailsFilter.FORBIDDEN)).isFalse();
			assertThat(downstream.hits("/listed/a", key)).isZero();
		}
		assertThat(get("/listed/a", "vip").getStatus().value()).as("the route's deny list over the gateway's allow list")
			.isEqualTo(403);
		assertThat(count("gateway.ratelimit.decisions", "listed", "outcome", "blocked")).isGreaterThanOrEqualTo(3);
	}

	@Test
	void anAllowedClientPassesUnlimitedCountedAsExempt() {
		double before = count("gateway.ratelimit.decisions", "listed", "outcome", "exempt");
		for (int i = 0; i < 5; i++) {
			EntityExchangeResult<String> allowed = get("/listed/b", "partner");
			assertThat(allowed.getStatus().value()).isEqualTo(200);
			assertThat(allowed.getResponseHeaders().containsHeader("RateLimit")).isFalse();
		}
		assertThat(downstream.hits("/listed/b", "partner")).isEqualTo(5);
		assertThat(count("gateway.ratelimit.decisions", "listed", "outcome", "exempt") - before).isEqualTo(5);
		String other = UUID.randomUUID().toString();
		assertThat(get("/listed/b", other).getStatus().value()).isEqualTo(200);
		assertThat(get("/listed/b", other).getStatus().value()).isEqualTo(200);
		assertThat(get("/listed/b", other).getStatus().value()).as("the route's limit, 429 as usual").isEqualTo(429);
	}

	/** The test client connects from loopback: the client-IP resolver's key is 127.0.0.1 (or ::1). */
	@Test
	void theClientIpResolversKeysMatchAddressesAndRanges() {
		EntityExchangeResult<String> denied = get("/by-ip-denied/c", "any");
		assertThat(denied.getStatus().value()).isEqualTo(403);
		for (int i = 0; i < 3; i++) {
			assertThat(get("/by-ip-allowed/c", "any").getStatus().value()).as("1 allowed, but listed").isEqualTo(200);
		}
	}

	@Test
	void anAllowedRequestNearALimitIsCounted() {
		String key = UUID.randomUUID().toString();
		double before = count("gateway.ratelimit.near_limit", "listed");
		get("/listed/d", key);
		assertThat(count("gateway.ratelimit.near_limit", "listed") - before).as("1 of 2: at the share 0.5").isEqualTo(1);
		get("/listed/d", key);
		get("/listed/d", key);
		assertThat(count("gateway.ratelimit.near_limit", "listed") - before).as("the refusal is not").isEqualTo(2);
	}

	@Test
	void badGatewayWideEntriesAndShareStopStartUpNamingPropertyAndWhatIsAllowed() {
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(WindowRateLimiterCoreAutoConfiguration.class,
					WindowRateLimiterAutoConfiguration.class))
			.withBean(ReactiveStringRedisTemplate.class, () -> RedisTestServer.get().template());
		runner.withPropertyValues("window-rate-limiter.deny=a,10.0.0.0/40").run(context -> assertThat(context)
			.getFailure()
			.hasStackTraceContaining("Invalid window-rate-limiter.deny: entry 1 '10.0.0.0/40' is not a valid address or "
					+ "range: '10.0.0.0/40' has prefix length '40'; allowed: 0 .. 32 (window-rate-limiter.deny[1]); "
					+ "allowed: client keys"));
		runner.withPropertyValues("window-rate-limiter.allow=x", "window-rate-limiter.deny=x").run(context -> assertThat(
				context)
			.getFailure()
			.hasStackTraceContaining("window-rate-limiter.deny names 'x', which window-rate-limiter.allow names too"));
		runner.withPropertyValues("window-rate-limiter.near-limit.share=80").run(context -> assertThat(context)
			.getFailure()
			.hasStackTraceContaining("window-rate-limiter.near-limit.share is '80.0'; allowed: a share of a limit above 0 "
					+ "and at most 1, such as 0.8"));
	}

}
