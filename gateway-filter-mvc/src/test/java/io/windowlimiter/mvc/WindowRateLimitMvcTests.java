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
 * real Redis and a real downstream that counts what reached it.
 */
@SpringBootTest(classes = MvcTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "window-rate-limiter.problem-details.enabled=true",
				"management.endpoints.web.exposure.include=health,ratelimits" })
class WindowRateLimitMvcTests {

	private static final Downstream downstream = new Downstream();

	private static final String RUN = Long.toString(System.currentTimeMillis(), 36);

	private static final HttpClient client = HttpClient.newHttpClient();

	/** Nothing listens on port 1: the route's call fails before any response. */
	private static final String UNREACHABLE = "http://127.0.0.1:1";

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
		route(registry, 2, "two-limits", "limits[0].limit=2", "limits[0].window=1m", "limits[1].limit=5",
				"limits[1].window=1h", "limits[1].name=hourly");
		route(registry, 3, "open-door", "limit=2", "window=1m", "deny-empty-key=false");
		// what the core decides for any adapter: a calendar quota, a penalty, lists
		route(registry, 4, "monthly", "limit=1", "calendar=month", "time-zone=Pacific/Kiritimati", "quota-status=403",
				"name=monthly");
		route(registry, 5, "penalty", "limit=1", "window=1s", "block-for=10m", "deny=banned-key", "allow=vip-key");
		route(registry, 6, "ops", "limit=3", "window=1m");
		// costs decided by the response: settled once the downstream has answered
		route(registry, 7, "login", "limit=3", "window=1m", "count-statuses=401,403");
		route(registry, 8, "metered", "limit=10", "window=1m", "cost=4", "cost-from-response-header=X-Actual-Cost");
		MvcTestRoutes.register(registry, 9, "unreachable", UNREACHABLE, "limit=1", "window=1m", "count-statuses=401,403");
		MvcTestRoutes.register(registry, 10, "unreachable-counted", UNREACHABLE, "limit=1", "window=1m", "count-statuses=5xx");
		// the refusals' own statuses; the core's (a quota's quota-status, a deny list's 403) keep precedence
		route(registry, 11, "coded", "limit=1", "window=1m", "status-code=503", "empty-key-status=401");
		route(registry, 12, "coded-quota", "limit=1", "calendar=month", "quota-status=403", "status-code=503",
				"deny=coded-banned");
		// a cost from a header, decided by a plan's limits
		registry.add("window-rate-limiter.plans.small.limits[0].limit", () -> "2");
		registry.add("window-rate-limiter.plans.small.limits[0].window", () -> "1m");
		route(registry, 13, "planned-costly", "plan=small", "cost-from-header=X-Cost");
		route(registry, 14, "daily", "limit=30", "window=1d", "algorithm=fixed-window");
	}

	private static void route(DynamicPropertyRegistry registry, int index, String id, String... args) {
		MvcTestRoutes.register(registry, index, id, downstream.uri(), args);
	}

	@AfterAll
	static void stop() {
		downstream.close();
	}

	@Test
	void passesTheLimitThenRefusesWith429RetryAfterHeadersAndProblemDetails() throws Exception {
		String key = "limited-" + RUN;
		for (int i = 1; i <= 3; i++) {
			HttpResponse<String> passed = get("/limited/x", key, null);
			assertThat(passed.statusCode()).isEqualTo(200);
			assertThat(passed.body()).isEqualTo("downstream");
			assertThat(passed.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(3 - i));
			assertThat(passed.headers().firstValue("RateLimit-Policy")).hasValue("\"limited\";q=3;w=60");
		}
		HttpResponse<String> refused = get("/limited/x", key, null);
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(refused.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
		assertThat(refused.headers().firstValue("Content-Type")).hasValueSatisfying(
				type -> assertThat(type).startsWith("application/problem+json"));
		assertThat(refused.body()).contains("quota-exceeded").contains("\"violated-policies\":[\"limited\"]");
		assertThat(downstream.hits("/limited/x", key)).as("requests that reached the downstream").isEqualTo(3);
		assertThat(get("/limited/x", "other-" + key, null).statusCode()).as("another client").isEqualTo(200);
	}

	/**
	 * As on WebFlux: without {@code deny-empty-key} a request without a key is refused with 403 and a
	 * problem-details body naming what was missing (it was a bare 403); with
	 * {@code deny-empty-key: false} every keyless request of the route counts under one shared key, the one
	 * the WebFlux filter uses, so both servers count them together.
	 */
	@Test
	void refusesARequestWithoutKeyWith403OrLimitsAllKeylessRequestsTogether() throws Exception {
		HttpResponse<String> keyless = get("/limited/nokey", null, null);
		assertThat(keyless.statusCode()).isEqualTo(403);
		assertThat(keyless.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(keyless.body()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Forbidden\",\"status\":403,"
				+ "\"detail\":\"This route counts requests per client by the X-API-Key header, and the request has none; "
				+ "send it\"}");
		assertThat(downstream.hits("/limited/nokey", null)).isZero();
		for (int i = 1; i <= 2; i++) {
			HttpResponse<String> passed = get("/open-door/nokey", null, null);
			assertThat(passed.statusCode()).isEqualTo(200);
			assertThat(passed.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(2 - i));
		}
		HttpResponse<String> refused = get("/open-door/nokey", null, null);
		assertThat(refused.statusCode()).as("the third keyless request").isEqualTo(429);
		assertThat(refused.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(downstream.hits("/open-door/nokey", null)).isEqualTo(2);
		assertThat(RedisTestServer.get().template().keys("wrl:{____EMPTY_KEY__}:open-door:*").collectList()
			.block(Duration.ofSeconds(5))).as("the shared key in Redis").isNotEmpty();
	}

	/** {@code status-code} and {@code empty-key-status}, as on the WebFlux filter. */
	@Test
	void refusesWithTheRoutesStatusCodeAndAKeylessRequestWithItsEmptyKeyStatus() throws Exception {
		String key = "coded-" + RUN;
		assertThat(get("/coded/x", key, null).statusCode()).isEqualTo(200);
		HttpResponse<String> refused = get("/coded/x", key, null);
		assertThat(refused.statusCode()).as("status-code").isEqualTo(503);
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(refused.body()).contains("\"status\":503", "\"violated-policies\":[\"coded\"]");
		HttpResponse<String> keyless = get("/coded/nokey", null, null);
		assertThat(keyless.statusCode()).as("empty-key-status").isEqualTo(401);
		assertThat(keyless.body()).contains("\"title\":\"Unauthorized\",\"status\":401");
		assertThat(downstream.hits("/coded/x", key)).isEqualTo(1);
		assertThat(downstream.hits("/coded/nokey", null)).isZero();
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
	void takesTheCostFromAHeaderAndRefusesABadOneWith400NamingIt() throws Exception {
		String key = "costly-" + RUN;
		assertThat(get("/costly/x", key, "2").statusCode()).isEqualTo(200);
		assertThat(get("/costly/x", key, "1").statusCode()).as("2 + 1 = 3").isEqualTo(200);
		assertThat(get("/costly/x", key, "1").statusCode()).as("3 + 1 > 3").isEqualTo(429);
		for (String bad : new String[] { "x", "0", "-1", "4" }) {
			HttpResponse<String> answer = get("/costly/x", "bad-" + key, bad);
			assertThat(answer.statusCode()).as("X-Cost: " + bad).isEqualTo(400);
			assertThat(answer.body()).as("X-Cost: " + bad).contains("X-Cost is '" + bad + "'");
		}
		assertThat(downstream.hits("/costly/x", "bad-" + key)).isZero();
	}

	@Test
	void enforcesEveryLimitOfAListFromYaml() throws Exception {
		String key = "two-" + RUN;
		assertThat(get("/two-limits/x", key, null).statusCode()).isEqualTo(200);
		assertThat(get("/two-limits/x", key, null).statusCode()).isEqualTo(200);
		assertThat(get("/two-limits/x", key, null).statusCode()).isEqualTo(429);
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

	@Test
	void aCalendarQuotaAnswersItsQuotaStatusWithARetryAfterToThePeriodsEndInItsZone() throws Exception {
		String key = "monthly-" + RUN;
		assertThat(get("/monthly/x", key, null).statusCode()).isEqualTo(200);
		HttpResponse<String> quota = get("/monthly/x", key, null);
		assertThat(quota.statusCode()).as("the quota-status").isEqualTo(403);
		assertThat(quota.body()).contains("\"status\":403", "\"violated-policies\":[\"monthly\"]");
		assertThat(retryAfter(quota)).isCloseTo(untilNextMonth("Pacific/Kiritimati"), within(5L));
		assertThat(downstream.hits("/monthly/x", key)).isEqualTo(1);
	}

	@Test
	void aPenaltyBlocksPastTheWindowAndListsAllowOrDeny() throws Exception {
		String key = "penalised-" + RUN;
		assertThat(get("/penalty/x", key, null).statusCode()).isEqualTo(200);
		HttpResponse<String> blocked = get("/penalty/x", key, null);
		assertThat(blocked.statusCode()).isEqualTo(429);
		assertThat(retryAfter(blocked)).as("the penalty's").isBetween(590L, 600L);
		Thread.sleep(1_100);
		assertThat(get("/penalty/x", key, null).statusCode()).as("blocked past the 1 s window").isEqualTo(429);

		HttpResponse<String> denied = get("/penalty/x", "banned-key", null);
		assertThat(denied.statusCode()).isEqualTo(403);
		assertThat(denied.headers().firstValue("Retry-After")).as("no wait ends a deny list's refusal").isEmpty();
		assertThat(denied.body()).contains("\"status\":403").doesNotContain("violated-policies");
		for (int i = 0; i < 3; i++) {
			assertThat(get("/penalty/x", "vip-key", null).statusCode()).as("allowed: never limited").isEqualTo(200);
		}
		assertThat(downstream.hits("/penalty/x", "banned-key")).isZero();
		assertThat(downstream.hits("/penalty/x", "vip-key")).isEqualTo(3);
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
	 * The login case: only failed logins (401, 403) count. The first 6 answers are 200s, each refunded
	 * once the downstream answered; then exactly 3 401s are counted and the next attempt is refused.
	 */
	@Test
	void countsOnlyTheListedStatusesSoOnlyFailedLoginsUseTheLimit() throws Exception {
		String key = "login-" + RUN;
		for (int i = 1; i <= 6; i++) {
			assertThat(get("/login/x?status=200", key, null).statusCode()).as("success " + i + ": refunded")
				.isEqualTo(200);
		}
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/login/x?status=401", key, null).statusCode()).as("failed login " + i + ": counted")
				.isEqualTo(401);
		}
		HttpResponse<String> refused = get("/login/x?status=401", key, null);
		assertThat(refused.statusCode()).as("a fourth failed login").isEqualTo(429);
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(get("/login/x?status=200", key, null).statusCode()).as("refused whatever it would answer")
			.isEqualTo(429);
		assertThat(downstream.hits("/login/x", key)).as("requests that reached the downstream").isEqualTo(9);
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

	/**
	 * A request reserves its {@code cost} (4 of 10) and is settled to what the downstream reports: a refund
	 * when lower (three calls costing 1 fit where three of 4 would not), a charge past the limit when higher
	 * (a call costing 20 leaves the client refused).
	 */
	@Test
	void settlesToTheCostTheDownstreamReports() throws Exception {
		String key = "metered-" + RUN;
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/metered/x?cost=1", key, null).statusCode()).as("call " + i + " costing 1").isEqualTo(200);
		}
		HttpResponse<String> costly = get("/metered/x?cost=20", key, null);
		assertThat(costly.statusCode()).isEqualTo(200);
		assertThat(costly.headers().firstValue("X-RateLimit-Remaining")).as("3 used, 4 reserved of 10").hasValue("3");
		HttpResponse<String> refused = get("/metered/x?cost=1", key, null);
		assertThat(refused.statusCode()).as("charged 20: past the limit").isEqualTo(429);
		assertThat(retryAfter(refused)).isPositive();
		assertThat(downstream.hits("/metered/x", key)).isEqualTo(4);
	}

	/** No figure, or one that is not a whole number: the request stays charged what it reserved. */
	@Test
	void keepsTheReservationWhenTheReportedCostIsAbsentOrUnreadable() throws Exception {
		String key = "unmetered-" + RUN;
		assertThat(get("/metered/y", key, null).statusCode()).isEqualTo(200);
		assertThat(get("/metered/y?cost=abc", key, null).statusCode()).isEqualTo(200);
		assertThat(get("/metered/y?cost=1", key, null).statusCode()).as("8 of 10 charged: 4 more do not fit")
			.isEqualTo(429);
	}

	/**
	 * A call that fails before any response (nothing listens) is settled by the 5xx the client is answered,
	 * as on WebFlux: refunded where only 401 and 403 count, counted where 5xx does.
	 */
	@Test
	void settlesAFailedCallByTheErrorStatusItIsAnswered() throws Exception {
		String key = "unreachable-" + RUN;
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/unreachable/x", key, null).statusCode()).as("failure " + i + ": refunded")
				.isGreaterThanOrEqualTo(500);
		}
		assertThat(get("/unreachable-counted/x", key, null).statusCode()).isGreaterThanOrEqualTo(500);
		assertThat(get("/unreachable-counted/x", key, null).statusCode()).as("the 5xx counted").isEqualTo(429);
	}

	private static long retryAfter(HttpResponse<String> response) {
		return Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow());
	}

	private static long untilNextMonth(String zone) {
		ZonedDateTime now = ZonedDateTime.now(ZoneId.of(zone));
		return Duration.between(now, now.toLocalDate().withDayOfMonth(1).plusMonths(1).atStartOfDay(now.getZone()))
			.toSeconds();
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
