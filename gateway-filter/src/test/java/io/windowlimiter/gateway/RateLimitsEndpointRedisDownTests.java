package io.windowlimiter.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.windowlimiter.gateway.test.DocsSamples;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.RedisProcess;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} endpoint while Redis does not answer, frozen (SIGSTOP) or killed, with a
 * {@code redis-server} of this test's own: a client's read, reset or block is a 503 whose problem body says
 * Redis is unavailable, within the {@code redis-timeout} bound, never a 500 or a wait of seconds; and the
 * endpoint answers again once Redis does.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=ratelimits",
				"window-rate-limiter.redis-timeout=600ms", "window-rate-limiter.redis-stall-timeout=400ms" })
class RateLimitsEndpointRedisDownTests {

	/**
	 * The redis-timeout (600 ms), and 400 ms for the HTTP round trip and the guard's timer on a busy
	 * 2-core machine: far below the 5 s an operator's Redis call was once allowed.
	 */
	private static final long BOUND_MILLIS = 1_000;

	private static final RedisProcess redis = RedisProcess.launch();

	private static final Downstream downstream = Downstream.start();

	private static final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", redis::port);
		TestRoutes.route(registry, 0, "orders", downstream, "window-rate-limiter.limit=5",
				"window-rate-limiter.window=1m");
	}

	@AfterAll
	static void stop() {
		downstream.close();
		redis.close();
	}

	@Test
	void aFrozenRedisIsA503WithinTheRedisTimeout() throws Exception {
		awaitAnswered();
		redis.freeze();
		try {
			HttpResponse<String> read = assertUnavailable("GET", "/orders/alice");
			// the answer docs/operating.md shows
			DocsSamples.Answer sample = DocsSamples.answer("docs/operating.md", "redis-frozen");
			DocsSamples.assertSameShape("docs/operating.md:" + sample.line(), sample.json(), read.body(), sample.varying());
			assertUnavailable("DELETE", "/orders/alice");
			assertUnavailable("GET", "/orders/alice");
		}
		finally {
			redis.thaw();
		}
		awaitAnswered();
	}

	@Test
	void aKilledRedisIsA503WithinTheRedisTimeout() throws Exception {
		awaitAnswered();
		redis.kill();
		try {
			assertUnavailable("GET", "/orders/bob");
			assertUnavailable("DELETE", "/orders/bob");
		}
		finally {
			redis.start();
		}
		awaitAnswered();
	}

	private HttpResponse<String> assertUnavailable(String method, String path) throws Exception {
		long started = System.nanoTime();
		HttpResponse<String> answer = send(method, path);
		long tookMillis = (System.nanoTime() - started) / 1_000_000;
		assertThat(answer.statusCode()).as(method + " " + path + ": " + answer.body()).isEqualTo(503);
		assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(
				type -> assertThat(type).startsWith("application/problem+json"));
		assertThat(answer.body()).contains("\"status\":503", "\"title\":\"Service Unavailable\"",
				"Redis is unavailable");
		assertThat(tookMillis).as(method + " " + path + " answered in ms").isLessThan(BOUND_MILLIS);
		return answer;
	}

	/** Redis back: the endpoint reads again, once the guard's next trial finds it answering. */
	private void awaitAnswered() throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		int status;
		do {
			status = send("GET", "/orders/carol").statusCode();
		}
		while (status != 200 && System.nanoTime() < deadline);
		assertThat(status).as("the endpoint once Redis is back").isEqualTo(200);
	}

	private HttpResponse<String> send(String method, String path) throws Exception {
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/ratelimits" + path))
			.timeout(Duration.ofSeconds(10))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		return http.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
