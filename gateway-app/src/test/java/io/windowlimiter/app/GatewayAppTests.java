package io.windowlimiter.app;

import java.time.Duration;

import io.windowlimiter.core.DenyCache;
import io.windowlimiter.demo.EmbeddedRedisEnvironmentPostProcessor;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application with its default configuration, so with no Redis configured: the embedded server
 * is started and the demo route is limited through it for real.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
@AutoConfigureMetrics
class GatewayAppTests {

	@Autowired
	private WebTestClient client;

	@Autowired
	private ReactiveStringRedisTemplate redis;

	@Autowired
	private ConfigurableEnvironment environment;

	@Autowired
	private DenyCache denyCache;

	@BeforeEach
	void forgetEarlierRequests() {
		// Every request here comes from 127.0.0.1, so all tests share one client key: forget its counts in
		// Redis and the denial this instance remembers.
		this.redis.execute((connection) -> connection.serverCommands().flushAll()).blockLast(Duration.ofSeconds(5));
		this.denyCache.clear();
	}

	@Test
	void usesTheEmbeddedRedis() {
		assertThat(this.environment.getPropertySources()
			.contains(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE_NAME)).isTrue();
		assertThat(this.environment.getProperty("spring.data.redis.host"))
			.isEqualTo(EmbeddedRedisEnvironmentPostProcessor.HOST);
		assertThat(this.redis.execute((connection) -> connection.ping()).blockFirst(Duration.ofSeconds(5)))
			.isEqualTo("PONG");
	}

	@Test
	void firstRequestReachesTheDemoBackendWithRateLimitHeaders() {
		this.client.get()
			.uri("/demo/hello")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("X-RateLimit-Limit", "5")
			.expectHeader()
			.valueEquals("X-RateLimit-Remaining", "4")
			.expectHeader()
			.exists("RateLimit-Policy")
			.expectBody()
			.jsonPath("$.message")
			.isEqualTo("hello from the demo backend")
			.jsonPath("$.path")
			.isEqualTo("/demo-backend/hello");
	}

	@Test
	void sixthRequestWithinTheWindowIsRefused() {
		for (int i = 1; i <= 5; i++) {
			this.client.get()
				.uri("/demo/hello")
				.exchange()
				.expectStatus()
				.isOk()
				.expectHeader()
				.valueEquals("X-RateLimit-Remaining", Integer.toString(5 - i));
		}
		this.client.get()
			.uri("/demo/hello")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("X-RateLimit-Remaining", "0")
			.expectHeader()
			.value("Retry-After", (retryAfter) -> assertThat(Long.parseLong(retryAfter)).isGreaterThanOrEqualTo(1));
	}

	@Test
	void demoBackendIsNotReachableAroundTheLimit() {
		this.client.get().uri(DemoBackend.PATH + "/hello").exchange().expectStatus().isNotFound();
	}

	@Test
	void healthIsUp() {
		this.client.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.status")
			.isEqualTo("UP");
	}

	@Test
	void prometheusShowsTheDecisionsAndTheRedisRoundTrips() {
		for (int i = 0; i < 7; i++) {
			this.client.get().uri("/demo/hello").exchange();
		}
		String scrape = this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(scrape).contains(
				"gateway_ratelimit_decisions_total{algorithm=\"sliding-log\",outcome=\"allowed\",route=\"demo\"}")
			.contains("gateway_ratelimit_decisions_total{algorithm=\"sliding-log\",outcome=\"denied\",route=\"demo\"}")
			.contains("gateway_ratelimit_redis_seconds_count{result=\"success\",route=\"demo\"}");
	}

}
