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
 * lifted by a reset made through the other.
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
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.timeout(Duration.ofSeconds(5))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
