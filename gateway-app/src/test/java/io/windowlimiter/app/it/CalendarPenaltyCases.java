package io.windowlimiter.app.it;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Calendar quotas and penalties through two packaged gateway-app jars on one real {@code redis-server},
 * over HTTP: a monthly quota in Kiritimati's zone (UTC+14) used up through one instance refuses on the
 * other with 403 (its {@code quota-status}) and says when the local month ends; a login route's penalty
 * set through one instance refuses on the other after the window has ended, shows on the endpoint and is
 * lifted by a reset made through the other; an operator's override into a monthly quota keeps what the
 * client used of the route's hour, and its clear returns the client to that hour with what it used.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CalendarPenaltyCases {

	private static final ZoneId KIRITIMATI = ZoneId.of("Pacific/Kiritimati");

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final GatewayJar a;

	private final GatewayJar b;

	CalendarPenaltyCases(JarPair pair) {
		this.a = pair.a();
		this.b = pair.b();
	}

	static void routes(RouteFile routes) {
		routes.route("cal-month", Map.<String, Object>of("limit", 3, "calendar", "month", "time-zone",
				"Pacific/Kiritimati", "quota-status", 403, "name", "monthly"));
		routes.route("pen-login", Map.<String, Object>of("algorithm", "fixed-window", "limit", 2, "window", "2s",
				"block-for", "1h", "name", "login"));
		routes.route("cal-rolling", RouteFile.with(RouteFile.limit("fixed-window", 10, "1h"), "name", "hourly"));
	}

	@Test
	void aMonthlyQuotaUsedUpOnOneInstanceIsA403OnTheOtherUntilTheLocalMonthEnds() throws Exception {
		String client = "monthly-" + this.run;
		for (int i = 0; i < 3; i++) {
			assertThat(request((i % 2 == 0) ? this.a : this.b, "cal-month", client).statusCode()).isEqualTo(200);
		}
		long before = System.currentTimeMillis();
		HttpResponse<String> refused = request(this.b, "cal-month", client);
		assertThat(refused.statusCode()).as(refused.body()).isEqualTo(403);
		// the problem-details body names the status given and the quota
		assertThat(refused.body()).contains("\"status\":403").contains("\"monthly\"");
		assertThat(refused.headers().firstValue("X-Window-Rate-Limiter-Status")).isEmpty();
		long monthEnd = LocalDate.ofInstant(Instant.ofEpochMilli(before), KIRITIMATI)
			.withDayOfMonth(1)
			.plusMonths(1)
			.atStartOfDay(KIRITIMATI)
			.toInstant()
			.toEpochMilli();
		long expected = (monthEnd - before) / 1000;
		assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()))
			.isBetween(expected - 5, expected + 5);
		assertThat(Long.parseLong(refused.headers().firstValue("X-RateLimit-Reset").orElseThrow()))
			.isBetween(expected - 5, expected + 5);
		assertThat(refused.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"monthly\";r=0;t=");
		// the same through the first instance, whose deny cache has not seen this client
		assertThat(request(this.a, "cal-month", client).statusCode()).isEqualTo(403);
	}

	@Test
	void aPenaltySetThroughOneInstanceRefusesOnTheOtherPastTheWindowUntilAResetLiftsIt() throws Exception {
		String client = "login-" + this.run;
		// the three within one clock-aligned 2 s window: an edge between them would start it afresh
		Limits.awaitRoomInWindow(Duration.ofSeconds(2), Duration.ofSeconds(1));
		assertThat(request(this.a, "pen-login", client).statusCode()).isEqualTo(200);
		assertThat(request(this.a, "pen-login", client).statusCode()).isEqualTo(200);
		HttpResponse<String> refused = request(this.a, "pen-login", client);
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("Retry-After")).contains("3600");
		// the 2 s window ends; the block (in Redis) refuses on the other instance, which has cached nothing
		GatewayJar.sleep(2_500);
		HttpResponse<String> blocked = request(this.b, "pen-login", client);
		assertThat(blocked.statusCode()).isEqualTo(429);
		assertThat(Long.parseLong(blocked.headers().firstValue("Retry-After").orElseThrow())).isBetween(3590L, 3600L);
		assertThat(blocked.body()).contains("\"login\"");
		JsonNode standing = JsonMapper.shared()
			.readTree(send(this.a, "GET", clientPath("pen-login", client)).body());
		assertThat(standing.path("blockedFor").asLong()).isBetween(3590L, 3600L);
		assertThat(standing.path("limits").get(0).path("remaining").asLong()).as("a blocked request charges nothing")
			.isEqualTo(2);
		// lifted by a reset made through the other instance: both serve the client at once
		assertThat(send(this.a, "DELETE", clientPath("pen-login", client)).statusCode()).isEqualTo(200);
		assertThat(request(this.b, "pen-login", client).statusCode()).isEqualTo(200);
		assertThat(request(this.a, "pen-login", client).statusCode()).isEqualTo(200);
		assertThat(JsonMapper.shared().readTree(send(this.b, "GET", clientPath("pen-login", client)).body())
			.path("blockedFor").asLong()).isZero();
	}

	/**
	 * An operator's override into a calendar quota, with counts in place: a client that used 4 of the route's
	 * 10 an hour is given 6 a month at Kiritimati through A. The 4 count in the month (the fixed window and the
	 * calendar quota share the client's key): B reads 2 left without spending any, serves 2, and then both
	 * refuse until the local month ends. Cleared through B: the route's hour again, with the month's 6 counted
	 * in it (at most its 10): 4 more across both, then refused until the hour ends, not the month.
	 */
	@Test
	void anOverrideIntoACalendarQuotaKeepsWhatWasUsedAndItsClearReturnsTheRoutesWindow() throws Exception {
		String client = "rolled-" + this.run;
		// the 4 within one clock hour (the route's window): an edge between them would start it afresh
		Limits.awaitRoomInWindow(Duration.ofHours(1), Duration.ofSeconds(10));
		HttpResponse<String> used = null;
		for (int i = 0; i < 4; i++) {
			used = request((i % 2 == 0) ? this.a : this.b, "cal-rolling", client);
			assertThat(used.statusCode()).isEqualTo(200);
		}
		assertThat(used.headers().firstValue("RateLimit").orElse("")).startsWith("\"hourly\";r=6;");

		HttpResponse<String> override = send(this.a, "POST", clientPath("cal-rolling", client),
				"{\"limit\": 6, \"calendar\": \"month\", \"timeZone\": \"Pacific/Kiritimati\", \"name\": \"monthly\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		JsonNode given = json(override).path("assignment").path("limits").get(0);
		assertThat(given.path("calendar").asString()).contains("month").contains("Pacific/Kiritimati");
		assertThat(json(override).path("instancesNotified").asLong()).isEqualTo(2);
		JsonNode monthly = awaitLimit(this.b, "cal-rolling", client, 6);
		assertThat(monthly.path("name").asString()).isEqualTo("monthly");
		assertThat(monthly.path("remaining").asLong()).as("the 4 used count in the month").isEqualTo(2);
		HttpResponse<String> first = request(this.b, "cal-rolling", client);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("RateLimit-Policy").orElse(""))
			.isEqualTo("\"monthly\";q=6;w=" + Duration.ofDays(31).toSeconds());
		assertThat(first.headers().firstValue("RateLimit").orElse("")).startsWith("\"monthly\";r=1;");
		assertThat(request(this.a, "cal-rolling", client).statusCode()).isEqualTo(200);
		long before = System.currentTimeMillis();
		for (GatewayJar gateway : List.of(this.b, this.a)) {
			HttpResponse<String> refused = request(gateway, "cal-rolling", client);
			assertThat(refused.statusCode()).as("through " + gateway).isEqualTo(429);
			long expected = (monthEnd(before) - before) / 1000;
			assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()))
				.as("until the month ends at Kiritimati, through " + gateway)
				.isBetween(expected - 5, expected + 5);
		}

		HttpResponse<String> cleared = send(this.b, "POST", clientPath("cal-rolling", client), "{\"clear\": true}");
		assertThat(cleared.statusCode()).as(cleared.body()).isEqualTo(200);
		JsonNode hourly = awaitLimit(this.a, "cal-rolling", client, 10);
		assertThat(hourly.path("name").asString()).isEqualTo("hourly");
		assertThat(hourly.path("remaining").asLong()).as("the month's 6 count in the hour").isEqualTo(4);
		for (int i = 0; i < 4; i++) {
			HttpResponse<String> served = request((i % 2 == 0) ? this.a : this.b, "cal-rolling", client);
			assertThat(served.statusCode()).as("request " + (i + 1) + " after the clear").isEqualTo(200);
			assertThat(served.headers().firstValue("RateLimit-Policy").orElse("")).isEqualTo("\"hourly\";q=10;w=3600");
		}
		HttpResponse<String> refused = request(this.b, "cal-rolling", client);
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()))
			.as("until the hour ends, not the month").isBetween(1L, 3600L);
	}

	/** When the month in which {@code epochMillis} lies ends at Kiritimati, in epoch ms. */
	private static long monthEnd(long epochMillis) {
		return LocalDate.ofInstant(Instant.ofEpochMilli(epochMillis), KIRITIMATI)
			.withDayOfMonth(1)
			.plusMonths(1)
			.atStartOfDay(KIRITIMATI)
			.toInstant()
			.toEpochMilli();
	}

	/** Reads the client (spending nothing) until its first limit is this one; fails past 1 s. Returns that limit. */
	private JsonNode awaitLimit(GatewayJar gateway, String route, String client, long limit) throws Exception {
		long started = System.nanoTime();
		JsonNode read = json(send(gateway, "GET", clientPath(route, client)));
		while (read.path("limits").path(0).path("limit").asLong() != limit
				&& System.nanoTime() - started < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			read = json(send(gateway, "GET", clientPath(route, client)));
		}
		assertThat(read.path("limits").path(0).path("limit").asLong()).as("within 1 s through " + gateway + ": " + read)
			.isEqualTo(limit);
		return read.path("limits").get(0);
	}

	private static String clientPath(String route, String client) {
		return "/actuator/ratelimits/" + route + "/" + URLEncoder.encode(client, StandardCharsets.UTF_8);
	}

	private HttpResponse<String> request(GatewayJar gateway, String route, String client) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/" + route + "/x"))
			.header("X-API-Key", client)
			.timeout(Duration.ofSeconds(5))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> send(GatewayJar gateway, String method, String path) throws Exception {
		return send(gateway, method, path, null);
	}

	/** @param json the request body, sent as JSON; null for none */
	private HttpResponse<String> send(GatewayJar gateway, String method, String path, String json) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
			.method(method, (json != null) ? HttpRequest.BodyPublishers.ofString(json) : HttpRequest.BodyPublishers.noBody())
			.timeout(Duration.ofSeconds(5));
		if (json != null) {
			request.header("Content-Type", "application/json");
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static JsonNode json(HttpResponse<String> response) {
		return JsonMapper.shared().readTree(response.body());
	}

}
