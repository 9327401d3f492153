package io.windowlimiter.mvc;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.windowlimiter.gateway.test.CountingDownstream;
import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * A Server MVC gateway (Tomcat) with WindowRateLimit routes from properties and from the Java DSL, over a
 * real Redis and a real downstream that counts what reached it: what is Server MVC's own (the Java DSL, the
 * endpoint's servlet extension, a plan's and an override's cost limits, the core's statuses before status-code,
 * failed logins at once). What every gateway filter must do, on both servers, is {@code WindowRateLimitFilterContract}'s
 * ({@link WindowRateLimitFilterMvcContractTests}).
 */
@SpringBootTest(classes = MvcTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "window-rate-limiter.problem-details.enabled=true",
				"management.endpoints.web.exposure.include=health,ratelimits" })
class WindowRateLimitMvcTests {

	private static final CountingDownstream downstream = new CountingDownstream();

	private static final String RUN = Long.toString(System.currentTimeMillis(), 36);

	private static final HttpClient client = HttpClient.newHttpClient();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("test.downstream", downstream::uri);
		route(registry, 0, "limited", "limit=3", "window=1m");
		route(registry, 1, "costly", "limit=3", "window=1m", "cost-from-header=X-Cost");
		route(registry, 2, "ops", "limit=3", "window=1m");
		route(registry, 3, "login", "limit=3", "window=1m", "count-statuses=401,403");
		// the core's statuses (a quota's quota-status, a deny list's 403) go before the route's status-code
		route(registry, 4, "coded-quota", "limit=1", "calendar=month", "quota-status=403", "status-code=503",
				"deny=coded-banned");
		// a cost from a header, decided by a plan's limits
		registry.add("window-rate-limiter.plans.small.limits[0].limit", () -> "2");
		registry.add("window-rate-limiter.plans.small.limits[0].window", () -> "1m");
		route(registry, 5, "planned-costly", "plan=small", "cost-from-header=X-Cost");
		route(registry, 6, "daily", "limit=30", "window=1d", "algorithm=fixed-window");
	}

	private static void route(DynamicPropertyRegistry registry, int index, String id, String... args) {
		MvcTestRoutes.register(registry, index, id, downstream.uri(), args);
	}

	@AfterAll
	static void stop() {
		downstream.close();
	}

	/** As on WebFlux: a calendar quota's quota-status and a deny list's 403 go before the route's status-code. */
	@Test
	void theCoresOwnStatusesGoBeforeTheStatusCode() throws Exception {
		String key = "coded-quota-" + RUN;
		assertThat(get("/coded-quota/x", key, null).statusCode()).isEqualTo(200);
		HttpResponse<String> quota = get("/coded-quota/x", key, null);
		assertThat(quota.statusCode()).as("the quota-status").isEqualTo(403);
		assertThat(quota.body()).contains("\"status\":403");
		assertThat(get("/coded-quota/x", "coded-banned", null).statusCode()).as("a deny list's").isEqualTo(403);
	}

	/**
	 * A cost more than the client's own policy takes at once is the client's mistake, a 400 with problem
	 * details naming the header and the most allowed, under a plan and under an operator's override alike (the
	 * route's own limits say nothing of either). Before, the filter checked the route's own limits (none on a
	 * plan route, not the override's) and the core's refusal of the cost went out as a 500.
	 */
	@Test
	void aCostAboveThePlansOrOverridesLimitIsA400NamingTheHeader() throws Exception {
		String key = "too-costly-" + RUN;
		HttpResponse<String> planned = get("/planned-costly/x", key, "3");
		assertThat(planned.statusCode()).as(planned.body()).isEqualTo(400);
		assertThat(planned.headers().firstValue("Content-Type")).hasValueSatisfying(
				type -> assertThat(type).startsWith("application/problem+json"));
		assertThat(planned.body()).contains("X-Cost is '3', more than this route allows at once",
				"allowed: a whole number from 1 to 2", "\"header\":\"X-Cost\"");
		assertThat(get("/planned-costly/x", key, "2").statusCode()).as("the plan's 2 fit").isEqualTo(200);

		HttpResponse<String> override = send("POST", "/actuator/ratelimits/costly/" + key,
				"{\"limit\": 2, \"window\": \"1m\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		HttpResponse<String> overridden = get("/costly/x", key, "3");
		assertThat(overridden.statusCode()).as("3 fit the route's 3, not the override's 2: " + overridden.body())
			.isEqualTo(400);
		assertThat(overridden.body()).contains("X-Cost is '3'", "allowed: a whole number from 1 to 2");
		assertThat(downstream.hits("/costly/x", key)).isZero();
		assertThat(send("POST", "/actuator/ratelimits/costly/" + key, "{\"clear\": true}").statusCode()).isEqualTo(200);
	}

	@Test
	void limitsARouteBuiltInTheJavaDsl() throws Exception {
		String key = "dsl-" + RUN;
		assertThat(get("/dsl/x", key, null).statusCode()).isEqualTo(200);
		HttpResponse<String> second = get("/dsl/x", key, null);
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.headers().firstValue("X-RateLimit-Limit")).hasValue("2");
		assertThat(get("/dsl/x", key, null).statusCode()).isEqualTo(429);
		assertThat(downstream.hits("/dsl/x", key)).isEqualTo(2);
	}

	/** The same arguments set in the Java DSL: a daily quota in Kiritimati, a deny and an allow list. */
	@Test
	void takesTheCalendarAndListArgumentsInTheJavaDsl() throws Exception {
		String key = "dsl-quota-" + RUN;
		assertThat(get("/dsl-quota/x", key, null).statusCode()).isEqualTo(200);
		HttpResponse<String> quota = get("/dsl-quota/x", key, null);
		assertThat(quota.statusCode()).isEqualTo(403);
		ZonedDateTime now = ZonedDateTime.now(ZoneId.of("Pacific/Kiritimati"));
		long untilTomorrow = Duration.between(now, now.toLocalDate().plusDays(1).atStartOfDay(now.getZone()))
			.toSeconds();
		assertThat(retryAfter(quota)).isCloseTo(untilTomorrow, within(5L));
		assertThat(get("/dsl-quota/x", "dsl-banned", null).statusCode()).isEqualTo(403);
		for (int i = 0; i < 3; i++) {
			assertThat(get("/dsl-quota/x", "dsl-vip", null).statusCode()).isEqualTo(200);
		}
	}

	/**
	 * Failed logins at once: each is reserved when admitted, before its answer, so while they wait for the
	 * downstream no more than the limit get through.
	 */
	@Test
	void concurrentFailedLoginsNeverPassTheLimit() throws Exception {
		String key = "login-flood-" + RUN;
		List<CompletableFuture<HttpResponse<String>>> attempts = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			attempts.add(client.sendAsync(request("/login/flood?status=401&delay=500", key, null).build(),
					HttpResponse.BodyHandlers.ofString()));
		}
		Map<Integer, Long> statuses = new TreeMap<>();
		for (CompletableFuture<HttpResponse<String>> attempt : attempts) {
			statuses.merge(attempt.get(20, TimeUnit.SECONDS).statusCode(), 1L, Long::sum);
		}
		assertThat(statuses).containsExactlyEntriesOf(new TreeMap<>(Map.of(401, 3L, 429, 7L)));
		assertThat(downstream.hits("/login/flood", key)).isEqualTo(3);
		assertThat(get("/login/flood?status=200", key, null).statusCode()).isEqualTo(429);
	}

	private static long retryAfter(HttpResponse<String> response) {
		return Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow());
	}

	/** The operator's endpoint (its routes) and the health indicator are the core's, on Server MVC too. */
	@Test
	void answersTheRatelimitsEndpointsRoutesAndHealth() throws Exception {
		assertThat(get("/limited/x", "ops-" + RUN, null).statusCode()).isEqualTo(200);
		HttpResponse<String> route = get("/actuator/ratelimits/limited", null, null);
		assertThat(route.statusCode()).isEqualTo(200);
		assertThat(route.body()).contains("\"limit\":3");
		HttpResponse<String> health = get("/actuator/health", null, null);
		assertThat(health.statusCode()).isEqualTo(200);
		assertThat(health.body()).contains("\"UP\"");
	}

	/**
	 * The endpoint's per-client operations answer the JSON and statuses they answer on WebFlux: a client's
	 * quota read after requests, an override posted and enforced, a reset; 404 for an unknown route, 400
	 * naming a bad field. (Their results are Monos, which Boot's servlet adapter does not unwrap by itself.)
	 */
	@Test
	void readsOverridesAndResetsAClientThroughTheEndpoint() throws Exception {
		String key = "ops-client-" + RUN;
		String client = "/actuator/ratelimits/ops/" + key;
		assertThat(get("/ops/x", key, null).statusCode()).isEqualTo(200);
		assertThat(get("/ops/x", key, null).statusCode()).isEqualTo(200);
		HttpResponse<String> read = send("GET", client, null);
		assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
		// read by the key; an X-API-Key is a credential, named by its hash (no secret is set here)
		assertThat(read.body()).contains("\"client\":\"" + new ClientKeyHash(null).of(key) + "\"", "\"limit\":3",
				"\"remaining\":1")
			.doesNotContain("\"body\"");

		HttpResponse<String> override = send("POST", client,
				"{\"limit\": 5, \"window\": \"1h\", \"name\": \"raised\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		assertThat(override.body()).contains("\"change\":\"override\"", "\"name\":\"raised\"");
		// counted by the route's algorithm in the route's key: the 2 used stay used (issue 44, attack r2 2(b))
		for (int i = 1; i <= 3; i++) {
			HttpResponse<String> passed = get("/ops/x", key, null);
			assertThat(passed.statusCode()).as("request " + i + " of the override's 5, 2 used").isEqualTo(200);
			assertThat(passed.headers().firstValue("RateLimit-Policy")).hasValue("\"raised\";q=5;w=3600");
		}
		assertThat(get("/ops/x", key, null).statusCode()).as("the override's sixth").isEqualTo(429);
		assertThat(send("GET", client, null).body()).contains("\"name\":\"raised\"", "\"remaining\":0");

		HttpResponse<String> reset = send("DELETE", client, null);
		assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
		assertThat(reset.body()).as("the route's count, which the override counts in").contains("\"deletedKeys\":1");
		assertThat(get("/ops/x", key, null).statusCode()).as("reset: the override's quota afresh").isEqualTo(200);
		assertThat(send("GET", client, null).body()).contains("\"remaining\":4");

		HttpResponse<String> unknown = send("GET", "/actuator/ratelimits/nowhere/" + key, null);
		assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(404);
		assertThat(unknown.body()).contains("No route or scope 'nowhere'");
		HttpResponse<String> bad = send("POST", client, "{\"limit\": 5, \"window\": \"soon\"}");
		assertThat(bad.statusCode()).as(bad.body()).isEqualTo(400);
		assertThat(bad.body()).contains("\"field\":\"window\"");
		assertThat(send("POST", client, "{\"clear\": true}").statusCode()).isEqualTo(200);
	}

	/**
	 * As on WebFlux ({@code OverrideAlgorithmEndpointTests}), issue 44 attack r2 2(b): an override naming no
	 * algorithm counts by the route's fixed window, in its key, so what the client used stays used under it and
	 * after it.
	 */
	@Test
	void anOverrideNamingNoAlgorithmKeepsWhatTheClientUsed() throws Exception {
		long hour = 3_600_000;
		long intoHour = System.currentTimeMillis() % hour;
		if (intoHour > hour - 15_000) {
			// the day's use is read as the override's hour's within that hour
			Thread.sleep(hour - intoHour + 100);
		}
		String key = "algo-" + RUN;
		String client = "/actuator/ratelimits/daily/" + key;
		for (int i = 0; i < 12; i++) {
			assertThat(get("/daily/x", key, null).statusCode()).isEqualTo(200);
		}
		assertThat(send("GET", client, null).body()).as("12 of 30 a day used").contains("\"remaining\":18");

		HttpResponse<String> override = send("POST", client, "{\"limit\": 20, \"window\": \"1h\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		assertThat(send("GET", client, null).body()).as("20 an hour, 12 used in it").contains("\"remaining\":8");
		int passed = 0;
		for (int i = 0; i < 10; i++) {
			passed += (get("/daily/x", key, null).statusCode() == 200) ? 1 : 0;
		}
		assertThat(passed).as("8 of the override's 20 left, not 20 fresh").isEqualTo(8);

		assertThat(send("POST", client, "{\"clear\": true}").statusCode()).isEqualTo(200);
		assertThat(send("GET", client, null).body()).as("the day's 30 less 12 + 8: spent under the override stays spent")
			.contains("\"remaining\":10");
	}

	/**
	 * An operator's POST does exactly what it says or nothing (issue 44, attack r2 10), as on WebFlux: a field the
	 * endpoint does not take, a field given twice, or a scope no route names is a 400 naming the field, nothing stored.
	 */
	@Test
	void aBodyThatSaysMoreOrOtherThanTheEndpointTakesIsRefusedNamingTheFieldAndNothingIsApplied() throws Exception {
		String[][] cases = {
				{ "{\"limit\": 1, \"window\": \"1h\", \"block-for\": \"10m\"}", "block-for",
						"block-for is not a field of this endpoint; allowed: blockFor (the endpoint's fields are camelCase" },
				{ "{\"limit\": 1, \"window\": \"1h\", \"algorithm\": \"sliding-log\", \"log-storage\": \"sorted-set\"}",
						"log-storage", "allowed: logStorage" },
				{ "{\"limit\": 1, \"window\": \"1h\", \"bogus\": \"x\"}", "bogus",
						"bogus is not a field of this endpoint; allowed: one of plan, limit, window," },
				{ "{\"block\": \"10m\", \"bogus\": true}", "bogus", "bogus is not a field of this endpoint" },
				{ "{\"limit\": 5000, \"window\": \"1h\", \"unit\": \"tokens\", \"unit\": \"requests\"}", "unit",
						"unit is given more than once; allowed: each field once" },
				{ "{\"limit\": 1, \"limit\": 100, \"window\": \"1h\"}", "limit", "limit is given more than once" },
				{ "{\"limit\": 1, \"window\": \"1h\", \"scope\": \"nosuch\"}", "scope",
						"scope is 'nosuch', which no route names" } };
		for (String[] refused : cases) {
			String key = "ops-body-" + RUN + "-" + refused[1];
			String client = "/actuator/ratelimits/ops/" + key;
			HttpResponse<String> answer = send("POST", client, refused[0]);
			assertThat(answer.statusCode()).as(refused[0] + " -> " + answer.body()).isEqualTo(400);
			assertThat(answer.body()).as(refused[0]).contains("\"field\":\"" + refused[1] + "\"").contains(refused[2]);
			HttpResponse<String> read = send("GET", client, null);
			assertThat(read.body()).as("nothing stored for " + refused[0]).contains("\"assignment\":null", "\"access\":null");
		}
		HttpResponse<String> written = send("POST", "/actuator/ratelimits/ops/ops-body-ok-" + RUN,
				"{\"limit\": 1, \"window\": \"1h\", \"blockFor\": \"10m\"}");
		assertThat(written.statusCode()).as(written.body()).isEqualTo(200);
		assertThat(written.body()).contains("\"blockFor\":\"PT10M\"");
		assertThat(send("POST", "/actuator/ratelimits/ops/ops-body-ok-" + RUN, "{\"clear\": true}").statusCode())
			.isEqualTo(200);
	}

	private HttpResponse<String> send(String method, String path, String json) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10))
			.header("Content-Type", "application/json")
			.method(method, (json != null) ? HttpRequest.BodyPublishers.ofString(json) : HttpRequest.BodyPublishers.noBody())
			.build();
		return client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> get(String path, String apiKey, String cost) throws IOException, InterruptedException {
		return client.send(request(path, apiKey, cost).build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest.Builder request(String path, String apiKey, String cost) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(5));
		if (apiKey != null) {
			request.header("X-API-Key", apiKey);
		}
		if (cost != null) {
			request.header("X-Cost", cost);
		}
		return request;
	}

}
