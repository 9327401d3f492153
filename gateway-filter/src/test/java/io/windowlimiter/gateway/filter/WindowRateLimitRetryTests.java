package io.windowlimiter.gateway.filter;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.gateway.test.ScriptedDownstream;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's {@code Retry} filter beside the limiter's filters, in either order, with a real Redis and a real
 * downstream that fails the first attempts of a request (503) and then answers. {@code Retry} runs the rest of the
 * chain again on the same exchange for each attempt: a gateway retry is not a new client request, so the request is
 * counted once, settled once on the final attempt's response, and a refusal is never retried into the downstream.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "window-rate-limiter.problem-details.enabled=true")
@AutoConfigureWebTestClient(timeout = "PT30S")
class WindowRateLimitRetryTests {

	static final ScriptedDownstream downstream = ScriptedDownstream.start();

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	/** Retries a 503 (and the gateway's default, every 5xx) of a GET or POST up to three times, at once. */
	private static final Map<String, String> RETRY = Map.of("name", "Retry", "args.retries", "3", "args.statuses",
			"SERVICE_UNAVAILABLE", "args.methods", "GET,POST");

	@Autowired
	private WebTestClient client;

	@Autowired
	private RateLimiterCore core;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		Map<String, String> three = limit("limit", "3", "window", "366d");
		route(registry, 0, "retry-first", RETRY, three);
		route(registry, 1, "retry-last", three, RETRY);
		// only successes count: a request whose attempts all failed is given back
		Map<String, String> successes = limit("limit", "3", "window", "366d", "algorithm", "sliding-log",
				"count-statuses", "2xx");
		route(registry, 2, "settle-first", RETRY, successes);
		route(registry, 3, "settle-last", successes, RETRY);
		// a refusal answered with a status Retry retries
		route(registry, 4, "refused", RETRY, limit("limit", "1", "window", "366d", "status-code", "503"));
		// filters at order -2, before the gateway writes the response: Retry, a route filter, runs after them
		route(registry, 5, "slots", RETRY, limit("algorithm", "concurrency", "limit", "1", "window", "30s"));
		route(registry, 6, "llm", RETRY, limit("llm", "openai", "limit", "100000", "window", "1h", "unit", "tokens"));
		// the RequestRateLimiter filter with this limiter
		Map<String, String> rateLimiter = Map.of("name", "RequestRateLimiter", "args.rate-limiter",
				"#{@windowRateLimiter}", "args.key-resolver", "#{@headerKeyResolver}",
				"args.window-rate-limiter.limit", "3", "args.window-rate-limiter.window", "366d");
		route(registry, 7, "rrl-retry-first", RETRY, rateLimiter);
		route(registry, 8, "rrl-retry-last", rateLimiter, RETRY);
	}

	/** A WindowRateLimit filter's properties, keyed by X-API-Key. */
	private static Map<String, String> limit(String... args) {
		Map<String, String> filter = new LinkedHashMap<>();
		filter.put("name", "WindowRateLimit");
		filter.put("args.key-resolver", "#{@headerKeyResolver}");
		for (int i = 0; i < args.length; i += 2) {
			filter.put("args." + args[i], args[i + 1]);
		}
		return filter;
	}

	/** Route {@code /<id>/**} to the downstream with these filters, in this order. */
	@SafeVarargs
	private static void route(DynamicPropertyRegistry registry, int index, String id, Map<String, String>... filters) {
		String route = ROUTES + "[" + index + "]";
		registry.add(route + ".id", () -> id);
		registry.add(route + ".uri", downstream::uri);
		registry.add(route + ".predicates[0]", () -> "Path=/" + id + "/**");
		for (int i = 0; i < filters.length; i++) {
			String filter = route + ".filters[" + i + "]";
			filters[i].forEach((name, value) -> registry.add(filter + "." + name, () -> value));
		}
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	/** A GET of the path with this API key, whose first {@code failures} attempts the downstream fails. */
	private EntityExchangeResult<String> get(String path, String apiKey, int failures) {
		return this.client.get()
			.uri(path)
			.header("X-API-Key", apiKey)
			.header(ScriptedDownstream.FAILURES, Integer.toString(failures))
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	private long remaining(String policyId, String apiKey) {
		return this.core.peek(policyId, apiKey).block(Duration.ofSeconds(5)).decisions().get(0).remaining();
	}

	/** Scripts Redis has run so far (EVALSHA and EVAL), from INFO commandstats. */
	private static long scriptCalls() {
		java.util.Properties stats = RedisTestServer.get().info("commandstats");
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
	void aRetriedRequestIsCountedOnceWhicheverFilterComesFirst() {
		for (String route : List.of("retry-first", "retry-last")) {
			String apiKey = UUID.randomUUID().toString();
			String path = "/" + route + "/" + UUID.randomUUID();
			long before = scriptCalls();
			EntityExchangeResult<String> answer = get(path, apiKey, 1);
			assertThat(answer.getStatus().value()).as(route).isEqualTo(200);
			assertThat(answer.getResponseBody()).isEqualTo("downstream");
			assertThat(answer.getResponseHeaders().getFirst("X-RateLimit-Remaining")).as(route).isEqualTo("2");
			assertThat(downstream.hits(path)).as("%s: both attempts reached the downstream", route).isEqualTo(2);
			assertThat(scriptCalls() - before).as("%s: one decision", route).isEqualTo(1);
			assertThat(remaining(route, apiKey)).as("%s: counted once", route).isEqualTo(2);
			// the client's next requests see its quota as one request used it
			assertThat(get(path + "/again", apiKey, 3).getStatus().value()).isEqualTo(200);
			assertThat(get(path + "/more", apiKey, 0).getStatus().value()).isEqualTo(200);
			assertThat(get(path + "/over", apiKey, 0).getStatus().value()).isEqualTo(429);
			assertThat(downstream.hits(path + "/over")).isZero();
		}
	}

	/** A route that settles by the response settles once, on the final attempt's: the client's status. */
	@Test
	void aRetriedRequestIsSettledOnceOnTheFinalAttemptsResponse() {
		for (String route : List.of("settle-first", "settle-last")) {
			String apiKey = UUID.randomUUID().toString();
			String path = "/" + route + "/" + UUID.randomUUID();
			long before = scriptCalls();
			assertThat(get(path, apiKey, 1).getStatus().value()).as(route).isEqualTo(200);
			assertThat(scriptCalls() - before).as("%s: a success counts as reserved: no settle", route).isEqualTo(1);
			assertThat(remaining(route, apiKey)).as(route).isEqualTo(2);

			String failing = path + "/failing";
			before = scriptCalls();
			assertThat(get(failing, apiKey, 10).getStatus().value()).as("%s: every attempt failed", route).isEqualTo(503);
			assertThat(downstream.hits(failing)).as("%s: the first attempt and three retries", route).isEqualTo(4);
			assertThat(scriptCalls() - before).as("%s: one decision, one settle", route).isEqualTo(2);
			assertThat(remaining(route, apiKey)).as("%s: given back once, no more", route).isEqualTo(2);
		}
	}

	/** A refusal whose status Retry retries (status-code 503 here) is answered again, never sent downstream. */
	@Test
	void aRefusalIsNotRetriedIntoTheDownstream() {
		String apiKey = UUID.randomUUID().toString();
		String path = "/refused/" + UUID.randomUUID();
		assertThat(get(path, apiKey, 0).getStatus().value()).isEqualTo(200);
		long before = scriptCalls();
		EntityExchangeResult<String> refused = get(path + "/refused", apiKey, 0);
		assertThat(refused.getStatus().value()).isEqualTo(503);
		assertThat(refused.getResponseHeaders().getFirst("Retry-After")).isNotNull();
		assertThat(refused.getResponseBody()).contains("\"status\":503", "\"violated-policies\":[\"refused\"]");
		assertThat(downstream.hits(path + "/refused")).isZero();
		assertThat(scriptCalls() - before).as("decided once").isEqualTo(1);
		assertThat(remaining("refused", apiKey)).isZero();
	}

	/** A concurrency filter runs before Retry: one slot for all the attempts, released at the end. */
	@Test
	void aConcurrencyFilterHoldsOneSlotForAllAttempts() throws InterruptedException {
		String apiKey = UUID.randomUUID().toString();
		String path = "/slots/" + UUID.randomUUID();
		assertThat(get(path, apiKey, 1).getStatus().value()).isEqualTo(200);
		assertThat(downstream.hits(path)).isEqualTo(2);
		// X-API-Key is a credential: the gateway keeps it hashed (no secret set here), so is its slots' key
		String slots = RedisKeys.of("slots", new ClientKeyHash(null).of(apiKey), "cc");
		long deadline = System.currentTimeMillis() + 5_000;
		while (Boolean.TRUE.equals(RedisTestServer.get().template().hasKey(slots).block(Duration.ofSeconds(5)))
				&& System.currentTimeMillis() < deadline) {
			Thread.sleep(20);
		}
		assertThat(RedisTestServer.get().template().hasKey(slots).block(Duration.ofSeconds(5))).as("the slot released")
			.isFalse();
		assertThat(get(path + "/next", apiKey, 0).getStatus().value()).isEqualTo(200);
	}

	/** An LLM filter runs before Retry: the call's tokens are reserved and settled once, whatever the attempts. */
	@Test
	void anLlmFilterChargesARetriedCallAsOneCall() {
		String body = "{\"model\":\"m\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
		long[] used = new long[2];
		for (int failures = 0; failures < 2; failures++) {
			String apiKey = UUID.randomUUID().toString();
			String path = "/llm/" + UUID.randomUUID() + "/v1/chat/completions";
			EntityExchangeResult<String> answer = this.client.post()
				.uri(path)
				.header("X-API-Key", apiKey)
				.header(ScriptedDownstream.FAILURES, Integer.toString(failures))
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(body)
				.exchange()
				.expectBody(String.class)
				.returnResult();
			assertThat(answer.getStatus().value()).isEqualTo(200);
			assertThat(downstream.hits(path)).isEqualTo(1 + failures);
			used[failures] = 100_000 - remaining("llm", apiKey);
		}
		assertThat(used[0]).isPositive();
		assertThat(used[1]).as("a call retried once is charged as the same call answered at once").isEqualTo(used[0]);
	}

	/**
	 * The RequestRateLimiter filter asks the limiter through the gateway's SPI, which sees a route and a key, no
	 * exchange: listed after Retry, each attempt is a request to it (as to the gateway's own Redis limiter);
	 * listed before, the request is counted once. The docs say to list Retry after the limiter.
	 */
	@Test
	void requestRateLimiterCountsEachAttemptItSeesSoRetryGoesAfterIt() {
		String apiKey = UUID.randomUUID().toString();
		String path = "/rrl-retry-last/" + UUID.randomUUID();
		EntityExchangeResult<String> once = get(path, apiKey, 1);
		assertThat(once.getStatus().value()).isEqualTo(200);
		assertThat(downstream.hits(path)).isEqualTo(2);
		assertThat(once.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("2");
		assertThat(remaining("rrl-retry-last", apiKey)).isEqualTo(2);

		path = "/rrl-retry-first/" + UUID.randomUUID();
		EntityExchangeResult<String> each = get(path, apiKey, 1);
		assertThat(each.getStatus().value()).isEqualTo(200);
		assertThat(downstream.hits(path)).isEqualTo(2);
		assertThat(remaining("rrl-retry-first", apiKey)).isEqualTo(1);
	}

}
