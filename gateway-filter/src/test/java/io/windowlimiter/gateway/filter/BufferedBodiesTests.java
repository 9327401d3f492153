package io.windowlimiter.gateway.filter;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import io.windowlimiter.core.BufferedBodies;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.ChunkedBody;
import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux filter's accounting of {@code window-rate-limiter.llm.max-buffered-bytes} (64 KB here): a body's
 * bytes are taken as they are read and every one is given back whatever ends it (admitted, refused by a limit,
 * 413, 400, the budget's own 503, the upstream failing, the client gone mid-body); a leak would refuse every LLM
 * call once the budget had leaked away, so after each case the instance holds nothing.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BufferedBodiesTests {

	static final FakeLlmServer upstream = FakeLlmServer.start();

	private static final int BUDGET = 64 * 1024;

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@Value("${local.server.port}")
	private int port;

	@Autowired
	private RateLimiterCore core;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("window-rate-limiter.llm.max-buffered-bytes", () -> "64KB");
		registry.add("window-rate-limiter.redis-timeout", () -> "5s");
		registry.add("window-rate-limiter.redis-stall-timeout", () -> "4s");
		route(registry, 0, "chat", "1000000");
		route(registry, 1, "one", "1");
	}

	private static void route(DynamicPropertyRegistry registry, int index, String id, String calls) {
		String route = "spring.cloud.gateway.server.webflux.routes[" + index + "].";
		registry.add(route + "id", () -> id);
		registry.add(route + "uri", upstream::baseUrl);
		registry.add(route + "predicates[0]", () -> "Path=/" + id + "/**");
		registry.add(route + "filters[0].name", () -> "WindowRateLimit");
		registry.add(route + "filters[0].args.key-resolver", () -> "#{@headerKeyResolver}");
		registry.add(route + "filters[0].args.llm", () -> "openai");
		registry.add(route + "filters[0].args.max-body-bytes", () -> "40000");
		registry.add(route + "filters[0].args.limits[0].limit", () -> "100000000");
		registry.add(route + "filters[0].args.limits[0].window", () -> "1d");
		registry.add(route + "filters[0].args.limits[0].unit", () -> "tokens");
		registry.add(route + "filters[0].args.limits[1].limit", () -> calls);
		registry.add(route + "filters[0].args.limits[1].window", () -> "1d");
	}

	@AfterEach
	void nothingHeld() {
		assertThat(awaitGivenBack()).as("bytes still held of the budget after the case").isZero();
	}

	@Test
	void theBudgetIsTheOneConfigured() {
		assertThat(this.core.bufferedBodies().max()).isEqualTo(BUDGET);
	}

	@Test
	void anAdmittedCallGivesItsBytesBack() throws Exception {
		try (ChunkedBody body = ChunkedBody.start(this.port, "/chat/v1/chat/completions", key())) {
			body.send(20_000);
			// counted as it is read, before the call is decided
			awaitBuffered(20_000);
			String answer = body.end().answer(Duration.ofSeconds(10));
			assertThat(answer).startsWith("HTTP/1.1 200");
		}
	}

	@Test
	void callsRefusedByALimitByTheirSizeOrTheirBodyGiveTheirBytesBack() throws Exception {
		String key = key();
		assertThat(post("/one/v1/chat/completions", key, chat()).statusCode()).isEqualTo(200);
		assertThat(post("/one/v1/chat/completions", key, chat()).statusCode()).isEqualTo(429);
		assertThat(awaitGivenBack()).isZero();
		try (ChunkedBody body = ChunkedBody.start(this.port, "/chat/v1/chat/completions", key())) {
			String answer = body.send(30_000).send(30_000).answer(Duration.ofSeconds(10));
			assertThat(answer).startsWith("HTTP/1.1 413");
		}
		assertThat(awaitGivenBack()).isZero();
		HttpResponse<String> duplicated = post("/chat/v1/chat/completions", key(),
				"{\"model\":\"m\",\"stream\":true,\"stream\":false,\"messages\":[]}");
		assertThat(duplicated.statusCode()).as(duplicated.body()).isEqualTo(400);
	}

	@Test
	void theUpstreamFailingGivesTheBytesBack() throws Exception {
		HttpResponse<String> failed = this.http.send(request("/chat/v1/chat/completions", key(), chat())
			.header(FakeLlmServer.HEADER_STATUS, "500")
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(failed.statusCode()).isEqualTo(500);
	}

	@Test
	void aBodyPastTheBudgetIsRefused503AtOnceAndTheClientGoneGivesItsBytesBack() throws Exception {
		try (ChunkedBody holder = ChunkedBody.start(this.port, "/chat/v1/chat/completions", key())) {
			holder.send(30_000).send(9_000);
			awaitBuffered(39_000);
			try (ChunkedBody second = ChunkedBody.start(this.port, "/chat/v1/chat/completions", key())) {
				String answer = second.send(20_000).send(10_000).answer(Duration.ofSeconds(5));
				assertThat(answer).startsWith("HTTP/1.1 503").containsIgnoringCase("retry-after: 1")
					.contains("application/problem+json").contains("\"max-buffered-bytes\":" + BUDGET);
			}
			// a declared length that would not fit is refused before a byte of it is read
			HttpResponse<String> declared = post("/chat/v1/chat/completions", key(),
					"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "b".repeat(30_000) + "\"}]}");
			assertThat(declared.statusCode()).as(declared.body()).isEqualTo(503);
			assertThat(declared.headers().firstValue("Retry-After")).hasValue("1");
			// the refused bodies gave theirs back; the holder still holds its own
			assertThat(this.core.bufferedBodies().buffered()).isBetween(39_000L, 40_000L);
			// a small call still fits beside the holder
			assertThat(post("/chat/v1/chat/completions", key(), chat()).statusCode()).isEqualTo(200);
		}
		// the holder hung up mid-body
	}

	private static String chat() {
		return "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":10}";
	}

	private static String key() {
		return "bb-" + UUID.randomUUID();
	}

	private HttpResponse<String> post(String path, String key, String body) throws Exception {
		return this.http.send(request(path, key, body).build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest.Builder request(String path, String key, String body) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10))
			.header("X-API-Key", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
	}

	private void awaitBuffered(long atLeast) throws InterruptedException {
		BufferedBodies bodies = this.core.bufferedBodies();
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (bodies.buffered() < atLeast && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(bodies.buffered()).isGreaterThanOrEqualTo(atLeast);
	}

	/** The bytes held once what ends asynchronously (a connection's close) has ended, within 5 s. */
	private long awaitGivenBack() {
		BufferedBodies bodies = this.core.bufferedBodies();
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (bodies.buffered() > 0 && System.nanoTime() < deadline) {
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
		}
		return bodies.buffered();
	}

}
