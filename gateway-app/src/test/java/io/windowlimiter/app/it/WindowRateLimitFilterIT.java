package io.windowlimiter.app.it;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
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
import java.util.concurrent.CompletableFuture;

import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code WindowRateLimit} filter through the packaged jar, over keep-alive HTTP, against a real Redis and a
 * real downstream whose status, cost header and delay each request chooses. One jar; each case has routes of
 * its own. Windows are an hour: no edge falls inside a test.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WindowRateLimitFilterIT {

	private static final String HEADER_KEY = "#{@headerKeyResolver}";

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private RedisProcess redis;

	private ScriptedJdkDownstream downstream;

	private GatewayJar gateway;

	@BeforeAll
	void start() {
		this.redis = RedisProcess.launch();
		this.downstream = ScriptedJdkDownstream.start();
		RouteFile routes = new RouteFile(this.downstream.uri());
		routes.windowRateLimit("two", List.of(limit(HEADER_KEY, 3), Map.of("id", "ip",
				"key-resolver", "#{@clientIpKeyResolver}", "algorithm", "sliding-log", "limit", 5, "window", "1h")));
		routes.windowRateLimit("cost", List.of(with(limit(HEADER_KEY, 10), "cost-from-header", "X-Cost")));
		routes.windowRateLimit("login", List.of(with(limit(HEADER_KEY, 5), "count-statuses", "401")));
		routes.windowRateLimit("refund", List.of(with(limit(HEADER_KEY, 2), "count-statuses", "1xx,2xx,3xx,4xx")));
		routes.windowRateLimit("metered", List.of(with(with(limit(HEADER_KEY, 10), "algorithm", "fixed-window"),
				"cost-from-response-header", ScriptedJdkDownstream.COST)));
		routes.windowRateLimit("hangup", List.of(with(limit(HEADER_KEY, 2), "count-statuses", "401")));
		this.gateway = GatewayJar.start("filter-it", this.redis.port(), routes.write(),
				"--management.endpoints.web.exposure.include=health,ratelimits",
				"--window-rate-limiter.problem-details.enabled=true");
	}

	@AfterAll
	void stop() throws Exception {
		Resources.close(this.gateway, this.downstream, this.redis);
	}

	/** One exact limit (a sliding log) per hour, keyed by the given resolver. */
	private static Map<String, Object> limit(String keyResolver, int limit) {
		return Map.of("key-resolver", keyResolver, "algorithm", "sliding-log", "limit", limit, "window", "1h");
	}

	private static Map<String, Object> with(Map<String, Object> args, String name, Object value) {
		Map<String, Object> copy = new java.util.LinkedHashMap<>(args);
		copy.put(name, value);
		return copy;
	}

	private HttpResponse<String> get(String path, String apiKey, String... headers) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.gateway.port() + path))
			.timeout(Duration.ofSeconds(10))
			.header("X-API-Key", apiKey);
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** What the client has left of the target's first limit, read through the ratelimits endpoint. */
	private long remaining(String target, String client) throws Exception {
		HttpResponse<String> standing = this.http.send(HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.gateway.port() + "/actuator/ratelimits/" + target + "/" + client))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(standing.statusCode()).as(standing.body()).isEqualTo(200);
		return JsonMapper.shared().readTree(standing.body()).path("limits").get(0).path("remaining").asLong();
	}

	private static String header(HttpResponse<?> response, String name) {
		return response.headers().firstValue(name).orElse(null);
	}

	@Test
	void twoFiltersWithDifferentKeysAreBothEnforcedAndARequestTheSecondRefusesIsNotChargedByTheFirst() throws Exception {
		String first = UUID.randomUUID().toString();
		String second = UUID.randomUUID().toString();
		for (int i = 1; i <= 3; i++) {
			HttpResponse<String> allowed = get("/two/x", first);
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(header(allowed, "RateLimit")).startsWith("\"two\";r=" + (3 - i) + ";");
		}
		HttpResponse<String> byKey = get("/two/x", first);
		assertThat(byKey.statusCode()).as("per key").isEqualTo(429);
		assertThat(byKey.body()).contains("\"violated-policies\":[\"two\"]");
		assertThat(get("/two/x", second).statusCode()).isEqualTo(200);
		HttpResponse<String> closest = get("/two/x", second);
		assertThat(header(closest, "RateLimit")).as("the IP's limit is now the closest").startsWith("\"two@ip\";r=0;");
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> byIp = get("/two/x", second);
			assertThat(byIp.statusCode()).as("per IP").isEqualTo(429);
			assertThat(header(byIp, "RateLimit")).startsWith("\"two@ip\";r=0;");
			assertThat(Long.parseLong(header(byIp, "Retry-After"))).isPositive();
			assertThat(byIp.body()).contains("\"violated-policies\":[\"two@ip\"]");
		}
		assertThat(this.downstream.hits("/two/x")).isEqualTo(5);
		assertThat(remaining("two", second)).as("the per-key filter gave back what the IP's refusals reserved")
			.isEqualTo(1);
		assertThat(remaining("two@ip", "127.0.0.1")).as("the IP is the second filter's client key").isZero();
		JsonNode routes = JsonMapper.shared()
			.readTree(this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.gateway.port()
					+ "/actuator/ratelimits")).build(), HttpResponse.BodyHandlers.ofString()).body());
		assertThat(routes.toString()).contains("\"two\"", "\"two@ip\"");
	}

	@Test
	void aCostFromARequestHeaderIsChargedAndABadOneIsA400NamingTheHeaderNeverFree() throws Exception {
		String client = UUID.randomUUID().toString();
		HttpResponse<String> four = get("/cost/x", client, "X-Cost", "4");
		assertThat(four.statusCode()).isEqualTo(200);
		assertThat(header(four, "X-RateLimit-Remaining")).isEqualTo("6");
		for (String bad : List.of("0", "-3", "four", "4.0", "", "11", "99999999999999999999999")) {
			HttpResponse<String> answer = get("/cost/x", client, "X-Cost", bad);
			assertThat(answer.statusCode()).as("X-Cost: '%s'", bad).isEqualTo(400);
			assertThat(header(answer, "Content-Type")).isEqualTo("application/problem+json");
			assertThat(answer.body()).contains("\"header\":\"X-Cost\"", "X-Cost is '");
		}
		assertThat(get("/cost/x", client, "X-Cost", "11").body()).contains("a whole number from 1 to 10");
		assertThat(this.downstream.hits("/cost/x")).isEqualTo(1);
		assertThat(remaining("cost", client)).as("nothing charged for the bad ones").isEqualTo(6);
		assertThat(get("/cost/x", client, "X-Cost", "6").statusCode()).isEqualTo(200);
		assertThat(get("/cost/x", client, "X-Cost", "1").statusCode()).isEqualTo(429);
	}

	@Test
	void onlyFailedLoginsCountAndConcurrentAttemptsNeverExceedTheLimit() throws Exception {
		String client = UUID.randomUUID().toString();
		for (int i = 0; i < 8; i++) {
			assertThat(get("/login/ok", client).statusCode()).as("successful logins are given back").isEqualTo(200);
		}
		assertThat(remaining("login", client)).isEqualTo(5);
		// 30 failed attempts at once, each held 300 ms by the upstream: all reserve at admission
		List<CompletableFuture<HttpResponse<String>>> attempts = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.gateway.port() + "/login/bad"))
				.timeout(Duration.ofSeconds(20))
				.header("X-API-Key", client)
				.header(ScriptedJdkDownstream.STATUS, "401")
				.header(ScriptedJdkDownstream.DELAY, "300")
				.build();
			attempts.add(this.http.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
		}
		int failed = 0;
		int refused = 0;
		for (CompletableFuture<HttpResponse<String>> attempt : attempts) {
			int status = attempt.get().statusCode();
			failed += (status == 401) ? 1 : 0;
			refused += (status == 429) ? 1 : 0;
		}
		assertThat(failed).as("attempts that reached the login form").isEqualTo(5);
		assertThat(refused).isEqualTo(25);
		assertThat(this.downstream.hits("/login/bad")).isEqualTo(5);
		assertThat(get("/login/ok", client).statusCode()).as("locked out, even for the right password").isEqualTo(429);
	}

	@Test
	void upstreamErrorsAreRefunded() throws Exception {
		String client = UUID.randomUUID().toString();
		for (int i = 0; i < 6; i++) {
			assertThat(get("/refund/x", client, ScriptedJdkDownstream.STATUS, (i % 2 == 0) ? "500" : "503").statusCode())
				.isIn(500, 503);
		}
		assertThat(remaining("refund", client)).isEqualTo(2);
		assertThat(get("/refund/x", client).statusCode()).isEqualTo(200);
		assertThat(get("/refund/x", client, ScriptedJdkDownstream.STATUS, "404").statusCode()).isEqualTo(404);
		assertThat(get("/refund/x", client).statusCode()).isEqualTo(429);
	}

	@Test
	void theUpstreamsCostHeaderSettlesTheReservationEitherWay() throws Exception {
		String client = UUID.randomUUID().toString();
		HttpResponse<String> first = get("/metered/x", client, ScriptedJdkDownstream.COST, "4");
		assertThat(header(first, "X-RateLimit-Remaining")).as("1 reserved at admission").isEqualTo("9");
		assertThat(remaining("metered", client)).as("settled to 4").isEqualTo(6);
		assertThat(get("/metered/x", client, ScriptedJdkDownstream.COST, "0").statusCode()).isEqualTo(200);
		assertThat(remaining("metered", client)).as("refunded").isEqualTo(6);
		assertThat(get("/metered/x", client, ScriptedJdkDownstream.COST, "25").statusCode()).isEqualTo(200);
		assertThat(remaining("metered", client)).as("charged past the limit").isZero();
		HttpResponse<String> refused = get("/metered/x", client);
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(this.downstream.hits("/metered/x")).isEqualTo(3);
	}

	@Test
	void aClientThatHangsUpBeforeItsResponseIsChargedItsReservation() throws Exception {
		String client = UUID.randomUUID().toString();
		// a successful login would be given back; this client hangs up before the upstream's answer
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.gateway.port()), 5_000);
			OutputStream out = socket.getOutputStream();
			out.write(("GET /hangup/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + client + "\r\n"
					+ ScriptedJdkDownstream.DELAY + ": 1500\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
			out.flush();
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (this.downstream.hits("/hangup/x") == 0 && System.nanoTime() < deadline) {
				Thread.sleep(20);
			}
			assertThat(this.downstream.hits("/hangup/x")).as("admitted and sent upstream").isEqualTo(1);
		}
		// the upstream answers 200 1.5 s after the request; by then nobody is there to receive it
		Thread.sleep(2_500);
		assertThat(remaining("hangup", client)).as("charged, not refunded").isEqualTo(1);
		// the same with the response read: refunded
		String reader = UUID.randomUUID().toString();
		assertThat(get("/hangup/y", reader, ScriptedJdkDownstream.DELAY, "200").statusCode()).isEqualTo(200);
		assertThat(remaining("hangup", reader)).isEqualTo(2);
	}


}
