package io.windowlimiter.mvc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpServer;
import io.windowlimiter.gateway.test.CountingDownstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Server MVC's {@code Retry} filter listed before {@code WindowRateLimit}: it runs the filter again, on the same
 * request, for each attempt. An attempt after the first is the same client request, as on WebFlux: decided once
 * (no unit, no token estimate more), settled once by its final outcome. A real Redis, a real downstream
 * answering 502, a real LLM upstream failing the first attempt.
 */
@SpringBootTest(classes = MvcTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=health,ratelimits")
class RetryMvcTests {

	private static final CountingDownstream downstream = new CountingDownstream();

	private static final FlakyLlm llm = new FlakyLlm();

	private static final int TOKENS = 1000;

	private static final Pattern REMAINING = Pattern.compile("\"remaining\":(-?\\d+)");

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("test.downstream", downstream::uri);
		// the loaded build machine: a decision Redis answers late must not fail open
		registry.add("window-rate-limiter.redis-timeout", () -> "5s");
		registry.add("window-rate-limiter.redis-stall-timeout", () -> "4s");
		retried(registry, 0, "retried", downstream.uri(), "limit=5", "window=10m");
		retried(registry, 1, "retried-counted", downstream.uri(), "limit=5", "window=10m", "count-statuses=2xx");
		retried(registry, 2, "retried-llm", llm.uri(), "llm=openai", "max-body-bytes=8192", "fail-mode=closed",
				"limits[0].algorithm=fixed-window", "limits[0].limit=" + TOKENS, "limits[0].window=1d",
				"limits[0].unit=tokens", "limits[1].algorithm=fixed-window", "limits[1].limit=100",
				"limits[1].window=1d");
	}

	/** Route {@code index}: {@code Retry} (3 retries of a 5xx, GET and POST), then {@code WindowRateLimit}. */
	private static void retried(DynamicPropertyRegistry registry, int index, String id, String uri, String... args) {
		String route = "spring.cloud.gateway.server.webmvc.routes[" + index + "].";
		registry.add(route + "id", () -> id);
		registry.add(route + "uri", () -> uri);
		registry.add(route + "predicates[0]", () -> "Path=/" + id + "/**");
		registry.add(route + "filters[0].name", () -> "Retry");
		registry.add(route + "filters[0].args.retries", () -> "3");
		registry.add(route + "filters[0].args.methods", () -> "GET,POST");
		registry.add(route + "filters[1].name", () -> "WindowRateLimit");
		registry.add(route + "filters[1].args.key-resolver", () -> "headerKeyResolver");
		for (String arg : args) {
			String[] nameValue = arg.split("=", 2);
			registry.add(route + "filters[1].args." + nameValue[0], () -> nameValue[1]);
		}
	}

	@AfterAll
	static void stop() {
		downstream.close();
		llm.close();
	}

	/** The attack's route {@code rb}: one request, four attempts answered 502, used 4 of 5 before. */
	@Test
	void aRequestRetriedOnEvery502IsOneRequest() throws Exception {
		String key = "rb-" + UUID.randomUUID();
		HttpResponse<String> answer = get("/retried/x?status=502", key);
		assertThat(answer.statusCode()).isGreaterThanOrEqualTo(500);
		assertThat(downstream.hits("/retried/x", key)).as("attempts that reached the downstream").isEqualTo(4);
		assertThat(remaining("retried", key)).as("units left of 5 after one client request").containsExactly(4L);
		HttpResponse<String> next = get("/retried/y", key);
		assertThat(next.statusCode()).isEqualTo(200);
		assertThat(next.headers().firstValue("X-RateLimit-Remaining")).hasValue("3");
	}

	/** count-statuses reads the final attempt: 502, 502, then 200 is counted once; every attempt failing, refunded. */
	@Test
	void aRetriedRequestIsSettledOnceByItsFinalAttempt() throws Exception {
		String key = "rc-" + UUID.randomUUID();
		HttpResponse<String> passed = get("/retried-counted/x?fail=2", key);
		assertThat(passed.statusCode()).isEqualTo(200);
		assertThat(passed.headers().firstValue("X-RateLimit-Remaining")).hasValue("4");
		assertThat(downstream.hits("/retried-counted/x", key)).isEqualTo(3);
		assertThat(remaining("retried-counted", key)).as("the final 200 counted once").containsExactly(4L);
		assertThat(get("/retried-counted/y?status=502", key).statusCode()).isGreaterThanOrEqualTo(500);
		assertThat(downstream.hits("/retried-counted/y", key)).isEqualTo(4);
		assertThat(remaining("retried-counted", key)).as("every attempt failed: given back").containsExactly(4L);
	}

	/**
	 * The attack's route {@code lr}: an LLM call whose every attempt is answered 502 is refunded (each attempt
	 * charged its estimate and never settled before); one whose first attempt fails is counted once, settled once to
	 * the usage of the attempt that answered, and sends the same body each time.
	 */
	@Test
	void aRetriedLlmCallIsCountedAndSettledOnce() throws Exception {
		String failing = "lr-" + UUID.randomUUID();
		HttpResponse<String> failed = post("/retried-llm/v1/chat/completions", failing, "fail-all");
		assertThat(failed.statusCode()).isGreaterThanOrEqualTo(500);
		assertThat(llm.received(failing)).as("attempts upstream").hasSize(4);
		assertThat(remaining("retried-llm", failing)).as("tokens, requests left").containsExactly((long) TOKENS,
				99L);

		String client = "lr-" + UUID.randomUUID();
		HttpResponse<String> answered = post("/retried-llm/v1/chat/completions", client, "fail-first");
		assertThat(answered.statusCode()).as(answered.body()).isEqualTo(200);
		assertThat(answered.body()).contains("\"total_tokens\":150");
		assertThat(llm.received(client)).as("the same body on each attempt").hasSize(2)
			.allSatisfy(body -> assertThat(body).startsWith(CHAT.substring(0, CHAT.length() - 1)));
		assertThat(remaining("retried-llm", client)).as("tokens, requests left").containsExactly(TOKENS - 150L,
				99L);
		HttpResponse<String> again = post("/retried-llm/v1/chat/completions", client, "ok");
		assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
		assertThat(remaining("retried-llm", client)).containsExactly(TOKENS - 300L, 98L);
	}

	private static final String CHAT = "{\"model\":\"gpt-fake\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
			+ "\"max_tokens\":300}";

	private HttpResponse<String> get(String path, String key) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(20))
			.header("X-API-Key", key)
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(String path, String key, String behaviour) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(20))
			.header("X-API-Key", key)
			.header("X-Flaky", behaviour)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(CHAT))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** What the client has left of each limit of the route, in order, through the ratelimits endpoint. */
	private List<Long> remaining(String route, String client) throws Exception {
		HttpResponse<String> standing = this.http.send(
				HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/ratelimits/" + route + "/"
						+ client)).timeout(Duration.ofSeconds(10)).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(standing.statusCode()).as(standing.body()).isEqualTo(200);
		Matcher remaining = REMAINING.matcher(standing.body().substring(standing.body().indexOf("\"limits\"")));
		List<Long> left = new ArrayList<>();
		while (remaining.find()) {
			left.add(Long.parseLong(remaining.group(1)));
		}
		return left;
	}

	/**
	 * An OpenAI chat completions upstream, by the request's {@code X-Flaky}: {@code fail-all} answers 502 to every
	 * attempt, {@code fail-first} to a client's first, else a completion using 120 + 30 tokens. Keeps each body.
	 */
	static final class FlakyLlm implements AutoCloseable {

		private final Map<String, List<String>> received = new ConcurrentHashMap<>();

		private final HttpServer server;

		FlakyLlm() {
			try {
				this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 50);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			this.server.createContext("/", exchange -> {
				String key = exchange.getRequestHeaders().getFirst("X-API-Key");
				String behaviour = exchange.getRequestHeaders().getFirst("X-Flaky");
				List<String> bodies = this.received.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>());
				bodies.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
				boolean fail = "fail-all".equals(behaviour) || ("fail-first".equals(behaviour) && bodies.size() == 1);
				byte[] body = (fail ? "{\"error\":{\"message\":\"bad gateway\",\"type\":\"server_error\"}}"
						: "{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
								+ "\"content\":\"hi\"}}],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":30,"
								+ "\"total_tokens\":150}}")
					.getBytes(StandardCharsets.UTF_8);
				exchange.getResponseHeaders().set("Content-Type", "application/json");
				exchange.sendResponseHeaders(fail ? 502 : 200, body.length);
				exchange.getResponseBody().write(body);
				exchange.close();
			});
			this.server.setExecutor(Executors.newFixedThreadPool(8));
			this.server.start();
		}

		String uri() {
			return "http://127.0.0.1:" + this.server.getAddress().getPort();
		}

		List<String> received(String key) {
			return this.received.getOrDefault(key, List.of());
		}

		@Override
		public void close() {
			this.server.stop(0);
		}

	}

}
