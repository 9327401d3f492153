package io.windowlimiter.app.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.windowlimiter.gateway.test.FakeLlmServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An operator's overrides on an LLM route, through two packaged gateway-app jars on one Redis, in front of the
 * fake OpenAI upstream: posted to one instance, applied by the other. Route {@code llm-ops} limits tokens (1,000
 * a day) and calls in flight (2), as the route; {@code plain} counts requests and meters no LLM calls.
 * Whatever an operator posts, a call is decided (allowed, or refused with honest headers), never a 500; a
 * change the routes cannot take is a 400 naming the field.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LlmOverridesCases {

	private static final String EXPOSE = "--management.endpoints.web.exposure.include=health,prometheus,ratelimits";

	private static final int BUDGET = 1000;

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final JarPair pair;

	LlmOverridesCases(JarPair pair) {
		this.pair = pair;
	}

	/** The pair's arguments these cases need: the endpoint exposed, and room for a loaded build machine. */
	static final List<String> ARGS = List.of(EXPOSE,
			// the loaded build machine: a decision Redis answers late must not fail open
			"--window-rate-limiter.redis-timeout=5s", "--window-rate-limiter.redis-stall-timeout=4s");

	static void routes(RouteFile routes, FakeLlmServer upstream) {
		Map<String, Object> llm = new LinkedHashMap<>();
		llm.put("key-resolver", "#{@headerKeyResolver}");
		llm.put("llm", "openai");
		llm.put("max-body-bytes", 8192);
		llm.put("limits[0].algorithm", "sliding-log");
		llm.put("limits[0].limit", BUDGET);
		llm.put("limits[0].window", "1d");
		llm.put("limits[0].unit", "tokens");
		llm.put("limits[1].algorithm", "concurrency");
		llm.put("limits[1].limit", 2);
		llm.put("limits[1].window", "10m");
		routes.windowRateLimit("llm-ops", upstream.baseUrl(), List.of(llm));
		routes.route("plain", RouteFile.limit("sliding-log", 5, "1h"));
	}

	private HttpResponse<String> call(GatewayJar gateway, String client, int tokens, String usage) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port()
				+ "/llm-ops/v1/chat/completions"))
			.timeout(Duration.ofSeconds(30))
			.header("X-API-Key", client)
			.header("Content-Type", "application/json")
			.header(FakeLlmServer.HEADER_USAGE, usage)
			.POST(HttpRequest.BodyPublishers.ofString(FakeLlmServer.chat(tokens, false)))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(GatewayJar gateway, String target, String client, String json) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port()
				+ "/actuator/ratelimits/" + target + "/" + client))
			.timeout(Duration.ofSeconds(10))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private JsonNode standing(GatewayJar gateway, String client) throws Exception {
		HttpResponse<String> read = this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port()
				+ "/actuator/ratelimits/llm-ops/" + client))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
		return JsonMapper.shared().readTree(read.body());
	}

	/** Waits until {@code gateway} decides the client by an override (every instance within a second). */
	private JsonNode awaitOverride(GatewayJar gateway, String client) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		JsonNode read = standing(gateway, client);
		while (!"override".equals(read.path("plan").asString()) && System.nanoTime() < deadline) {
			GatewayJar.sleep(50);
			read = standing(gateway, client);
		}
		assertThat(read.path("plan").asString()).as(read.toString()).isEqualTo("override");
		return read;
	}

	/** Waits until the client's calls are settled (a settle follows its response by a Redis round trip). */
	private void awaitTokensLeft(String client, long expected) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		long left = standing(this.pair.a(), client).path("limits").get(0).path("remaining").asLong();
		while (left != expected && System.nanoTime() < deadline) {
			GatewayJar.sleep(25);
			left = standing(this.pair.a(), client).path("limits").get(0).path("remaining").asLong();
		}
		assertThat(left).as("tokens left once settled").isEqualTo(expected);
	}

	/**
	 * The case: one limit posted for a client of a route with a token and a concurrency limit (the
	 * endpoint takes one limit, so requests). Before, every call of that client was answered 500. Now the
	 * override adds its request limit beside the route's token and concurrency limits: calls are decided on
	 * both instances, and refused with Retry-After and the limit named once the override's 2 an hour are used.
	 */
	@Test
	void aOneLimitOverrideOnARouteWithATokenAndAConcurrencyLimitHasItsCallsDecidedNot500() throws Exception {
		String client = "one-limit-" + UUID.randomUUID();
		HttpResponse<String> posted = post(this.pair.a(), "llm-ops", client, "{\"limit\": 200000, \"window\": \"1m\"}");
		assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
		awaitOverride(this.pair.b(), client);
		for (GatewayJar gateway : this.pair.both()) {
			HttpResponse<String> answer = call(gateway, client, 300, "100,20");
			assertThat(answer.statusCode()).as(gateway + ": " + answer.body()).isEqualTo(200);
			assertThat(answer.headers().firstValue("RateLimit-Policy").orElse(""))
				.contains("\"llm-ops-0\";q=1000;w=86400", "\"llm-ops-1\";q=2;w=600", "\"llm-ops-requests\";q=200000;w=60");
		}
		JsonNode read = standing(this.pair.a(), client);
		assertThat(read.path("limits")).as(read.toString()).hasSize(3);
		assertThat(read.path("limits").get(0).path("unit").asString()).isEqualTo("tokens");

		String tight = "two-an-hour-" + UUID.randomUUID();
		assertThat(post(this.pair.b(), "llm-ops", tight, "{\"limit\": 2, \"window\": \"1h\", \"algorithm\": \"sliding-log\"}")
			.statusCode()).isEqualTo(200);
		awaitOverride(this.pair.a(), tight);
		assertThat(call(this.pair.a(), tight, 100, "10,10").statusCode()).isEqualTo(200);
		assertThat(call(this.pair.b(), tight, 100, "10,10").statusCode()).isEqualTo(200);
		for (GatewayJar gateway : this.pair.both()) {
			HttpResponse<String> refused = call(gateway, tight, 100, "10,10");
			assertThat(refused.statusCode()).as(gateway + ": " + refused.body()).isEqualTo(429);
			assertThat(refused.headers().firstValue("Retry-After")).isPresent();
			assertThat(refused.headers().firstValue("RateLimit").orElse("")).startsWith("\"llm-ops-requests\";r=0;");
		}
	}

	/**
	 * An operator lowers an abuser's token budget: {@code unit: tokens} in the override. Before, the field was
	 * ignored and the override stored as a request limit, and every call of the client was a 500. Now both
	 * instances reserve at most the new budget, charge the usage, and refuse once it is used; the route's
	 * concurrency limit stays.
	 */
	@Test
	void aTokenOverrideLowersTheBudgetOnBothInstances() throws Exception {
		String client = "abuser-" + UUID.randomUUID();
		HttpResponse<String> posted = post(this.pair.a(), "llm-ops", client,
				"{\"limit\": 200, \"window\": \"1d\", \"algorithm\": \"sliding-log\", \"unit\": \"tokens\"}");
		assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
		JsonNode assignment = JsonMapper.shared().readTree(posted.body()).path("assignment").path("limits").get(0);
		assertThat(assignment.path("unit").asString()).isEqualTo("tokens");
		JsonNode read = awaitOverride(this.pair.b(), client);
		assertThat(read.path("limits")).as("the route's concurrency limit stays").hasSize(2);
		assertThat(read.path("limits").get(0).path("limit").asLong()).isEqualTo(200);

		HttpResponse<String> first = call(this.pair.b(), client, 300, "60,40");
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(first.headers().firstValue("X-RateLimit-Remaining-Tokens")).as("300 estimated, 200 reserved")
			.hasValue("0");
		awaitTokensLeft(client, 100);
		HttpResponse<String> second = call(this.pair.a(), client, 60, "20,20");
		assertThat(second.statusCode()).as("100 used of 200: 60 fit").isEqualTo(200);
		assertThat(second.headers().firstValue("X-RateLimit-Remaining-Tokens")).hasValue("40");
		awaitTokensLeft(client, 60);
		HttpResponse<String> third = call(this.pair.b(), client, 80, "10,10");
		assertThat(third.statusCode()).as("140 used of 200: 80 more do not fit").isEqualTo(429);
		assertThat(third.headers().firstValue("RateLimit").orElse("")).startsWith("\"llm-ops-0\";r=60;");
	}

	/** A token limit on a route that meters no LLM calls would count nothing: refused, naming the field. */
	@Test
	void aTokenOverrideOnARouteWithoutLlmIsA400NamingUnit() throws Exception {
		HttpResponse<String> refused = post(this.pair.a(), "plain", "c-" + UUID.randomUUID(),
				"{\"limit\": 100, \"window\": \"1m\", \"unit\": \"tokens\"}");
		assertThat(refused.statusCode()).as(refused.body()).isEqualTo(400);
		JsonNode body = JsonMapper.shared().readTree(refused.body());
		assertThat(body.path("field").asString()).isEqualTo("unit");
		assertThat(body.path("error").asString()).contains("unit is 'tokens' on route 'plain'", "allowed: ");
		HttpResponse<String> bad = post(this.pair.a(), "llm-ops", "c-" + UUID.randomUUID(),
				"{\"limit\": 100, \"window\": \"1m\", \"unit\": \"words\"}");
		assertThat(bad.statusCode()).as(bad.body()).isEqualTo(400);
		assertThat(JsonMapper.shared().readTree(bad.body()).path("field").asString()).isEqualTo("unit");
	}

	/**
	 * A body Boot cannot hand to the endpoint (a list or an object as a value, no JSON object at all): Boot
	 * refused it before the endpoint with its own bare 400 ({@code {"timestamp":...,"status":400,"error":"Bad
	 * Request"}}); now the 400 names the field and what is allowed, as every other refusal of the endpoint.
	 */
	@Test
	void aBodyBootCannotHandOverIsA400NamingTheField() throws Exception {
		Map<String, String> fields = new LinkedHashMap<>();
		fields.put("{\"limits\": [{\"limit\": 5000, \"window\": \"1m\", \"unit\": \"tokens\"}]}", "limits");
		fields.put("{\"limit\": 5000, \"window\": \"1m\", \"unit\": [\"tokens\"]}", "unit");
		fields.put("{\"limit\": {\"tokens\": 5000}, \"window\": \"1m\"}", "limit");
		fields.put("[1, 2]", "body");
		fields.put("limit=5000", "body");
		for (GatewayJar gateway : this.pair.both()) {
			for (Map.Entry<String, String> body : fields.entrySet()) {
				HttpResponse<String> refused = post(gateway, "llm-ops", "c-" + UUID.randomUUID(), body.getKey());
				assertThat(refused.statusCode()).as(body.getKey()).isEqualTo(400);
				JsonNode answer = JsonMapper.shared().readTree(refused.body());
				assertThat(answer.path("field").asString()).as(refused.body()).isEqualTo(body.getValue());
				assertThat(answer.path("error").asString()).as(refused.body())
					.startsWith("Invalid assignment on 'llm-ops': " + body.getValue() + " is ")
					.contains("allowed: one JSON object whose fields are text, numbers or true", "one limit per POST");
			}
		}
	}

}
