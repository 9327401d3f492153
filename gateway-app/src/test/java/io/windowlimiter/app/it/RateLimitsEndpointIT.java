package io.windowlimiter.app.it;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} actuator endpoint of two gateway-app jars on one real {@code redis-server},
 * over HTTP: exposed the way a user would ({@code management.endpoints.web.exposure.include}), read
 * through one instance while requests go through the other, and a reset made through one instance
 * served by the other at once, deny cache and all.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RateLimitsEndpointIT {

	private static final String EXPOSE = "--management.endpoints.web.exposure.include=health,prometheus,ratelimits";

	/** An hour: no window edge or refill during the test, and a denial the deny cache keeps that long. */
	private static final String HOUR = "1h";

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private RedisProcess redis;

	private JdkDownstream downstream;

	private List<GatewayJar> gateways = List.of();

	private GatewayJar a;

	private GatewayJar b;

	@BeforeAll
	void start() {
		this.redis = RedisProcess.launch();
		this.downstream = JdkDownstream.start();
		RouteFile routes = new RouteFile(this.downstream.uri());
		routes.route("ops-read", RouteFile.limit("sliding-log", 5, HOUR));
		routes.route("ops-deny", RouteFile.limit("sliding-log", 3, HOUR));
		routes.route("ops-bucket", RouteFile.with(RouteFile.limit("token-bucket", 10, "1m"), "burst", 4));
		this.gateways = GatewayJar.startAll(this.redis.port(), routes.write(), List.of(EXPOSE), "ops-a", "ops-b");
		this.a = this.gateways.get(0);
		this.b = this.gateways.get(1);
	}

	@AfterAll
	void stop() {
		this.gateways.forEach(GatewayJar::close);
		if (this.downstream != null) {
			this.downstream.close();
		}
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Test
	void listsEveryRouteWithItsLimits() throws Exception {
		HttpResponse<String> response = send(this.a, "GET", "/actuator/ratelimits");
		assertThat(response.statusCode()).isEqualTo(200);
		JsonNode routes = json(response).path("routes");
		assertThat(routes.propertyNames()).containsExactlyInAnyOrder("ops-read", "ops-deny", "ops-bucket");
		JsonNode bucket = routes.path("ops-bucket").path("limits").get(0);
		assertThat(bucket.path("algorithm").asString()).isEqualTo("token-bucket");
		assertThat(bucket.path("limit").asLong()).isEqualTo(10);
		assertThat(bucket.path("window").asString()).isEqualTo("PT1M");
		assertThat(bucket.path("burst").asLong()).isEqualTo(4);
		JsonNode read = routes.path("ops-read").path("limits").get(0);
		assertThat(read.path("algorithm").asString()).isEqualTo("sliding-log");
		assertThat(read.path("logStorage").asString()).isEqualTo("ring");
	}

	@Test
	void remainingDropsWithRequestsAndNotWithReading() throws Exception {
		String client = "reader-" + this.run;
		assertThat(standing(this.b, "ops-read", client)).containsExactly(5L);
		assertThat(standing(this.b, "ops-read", client)).as("reading spends nothing").containsExactly(5L);
		assertThat(proxied(this.a, "ops-read", client)).isEqualTo(200);
		assertThat(proxied(this.a, "ops-read", client)).isEqualTo(200);
		assertThat(standing(this.b, "ops-read", client)).as("read on the other instance").containsExactly(3L);
		assertThat(standing(this.a, "ops-read", client)).containsExactly(3L);
		assertThat(proxied(this.b, "ops-read", client)).isEqualTo(200);
		assertThat(standing(this.a, "ops-read", client)).containsExactly(2L);

		JsonNode limit = json(send(this.a, "GET", clientPath("ops-read", client))).path("limits").get(0);
		assertThat(limit.path("name").asString()).isNotEmpty();
		assertThat(limit.path("limit").asLong()).isEqualTo(5);
		assertThat(limit.path("window").asString()).isEqualTo("PT1H");
		assertThat(limit.path("reset").asLong()).isBetween(3_500L, 3_600L);
	}

	/**
	 * B refuses the client from its deny cache for the hour: Redis no longer decides, as deleting the
	 * counts behind its back shows. A reset through A reaches B's cache within a second.
	 */
	@Test
	void aResetThroughOneInstanceIsServedByTheOtherAtOnce() throws Exception {
		String client = "flooder-" + this.run;
		for (int i = 0; i < 3; i++) {
			assertThat(proxied(this.b, "ops-deny", client)).isEqualTo(200);
		}
		assertThat(proxied(this.b, "ops-deny", client)).isEqualTo(429);
		flushRedis();
		assertThat(proxied(this.b, "ops-deny", client)).as("refused from B's deny cache").isEqualTo(429);
		assertThat(proxied(this.b, "ops-deny", client)).isEqualTo(429);

		JsonNode route = json(send(this.b, "GET", "/actuator/ratelimits/ops-deny"));
		assertThat(route.path("limits").get(0).path("limit").asLong()).isEqualTo(3);
		JsonNode top = route.path("topDenied");
		assertThat(top.path("window").asString()).isEqualTo("PT5M");
		assertThat(top.path("clients").get(0).path("client").asString()).isEqualTo(client);
		assertThat(top.path("clients").get(0).path("denials").asLong()).isEqualTo(3);

		HttpResponse<String> reset = send(this.a, "DELETE", clientPath("ops-deny", client));
		long resetAt = System.nanoTime();
		assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
		assertThat(json(reset).path("instancesNotified").asLong()).as("both instances heard it").isEqualTo(2);
		int status = proxied(this.b, "ops-deny", client);
		while (status != 200 && System.nanoTime() - resetAt < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			status = proxied(this.b, "ops-deny", client);
		}
		assertThat(status).as("B serves the reset client within 1 s").isEqualTo(200);
		assertThat(standing(this.a, "ops-deny", client)).containsExactly(2L);
	}

	@Test
	void resetStartsEveryLimitAfresh() throws Exception {
		String client = "resettable-" + this.run;
		proxied(this.a, "ops-read", client);
		proxied(this.b, "ops-read", client);
		assertThat(standing(this.a, "ops-read", client)).containsExactly(3L);
		HttpResponse<String> reset = send(this.b, "DELETE", clientPath("ops-read", client));
		assertThat(json(reset).path("deletedKeys").asLong()).isEqualTo(1);
		assertThat(standing(this.a, "ops-read", client)).containsExactly(5L);
	}

	/** Keys as key resolvers make them: e-mail, IPv6, paths, spaces, long (hashed in Redis). */
	@Test
	void oddClientKeysWork() throws Exception {
		List<String> keys = List.of("user+tag@example.com", "2001:db8::1", "a/b/c", "/leading//double/",
				"with space", "x".repeat(100) + "-" + this.run);
		for (String key : keys) {
			String client = key + "-" + this.run;
			assertThat(proxied(this.a, "ops-read", client)).as(client).isEqualTo(200);
			assertThat(standing(this.b, "ops-read", client)).as(client).containsExactly(4L);
			JsonNode read = json(send(this.b, "GET", clientPath("ops-read", client)));
			assertThat(read.path("client").asString()).isEqualTo(client);
			assertThat(send(this.b, "DELETE", clientPath("ops-read", client)).statusCode()).as(client).isEqualTo(200);
			assertThat(standing(this.a, "ops-read", client)).as(client).containsExactly(5L);
		}
		// slashes may be written as they are, as long as none leads, ends or doubles
		String client = "path/like/key-" + this.run;
		proxied(this.a, "ops-read", client);
		HttpResponse<String> raw = send(this.a, "GET", "/actuator/ratelimits/ops-read/" + client);
		assertThat(json(raw).path("client").asString()).isEqualTo(client);
		assertThat(json(raw).path("limits").get(0).path("remaining").asLong()).isEqualTo(4);
		// a key no request can carry in a header (non-ASCII, as a principal's name may be) reads and resets
		String unicode = "ünïcødé 🚦-" + this.run;
		assertThat(json(send(this.a, "GET", clientPath("ops-read", unicode))).path("client").asString())
			.isEqualTo(unicode);
		assertThat(standing(this.a, "ops-read", unicode)).containsExactly(5L);
		assertThat(send(this.a, "DELETE", clientPath("ops-read", unicode)).statusCode()).isEqualTo(200);
	}

	@Test
	void anUnknownRouteIsNotFoundWithAMessage() throws Exception {
		for (HttpResponse<String> response : List.of(send(this.a, "GET", "/actuator/ratelimits/nope"),
				send(this.a, "GET", "/actuator/ratelimits/nope/someone"),
				send(this.a, "DELETE", "/actuator/ratelimits/nope/someone"))) {
			assertThat(response.statusCode()).as(response.body()).isEqualTo(404);
			assertThat(json(response).path("error").asString()).contains("No route 'nope'");
			assertThat(response.body()).contains("ops-read");
		}
	}

	/** The public port's routes do not reach the endpoint unless exposed: the app exposes health and prometheus only. */
	@Test
	void theAppDoesNotExposeItByDefault() {
		try (GatewayJar plain = GatewayJar.start("ops-plain", this.redis.port(),
				new RouteFile(this.downstream.uri()).write())) {
			assertThat(send(plain, "GET", "/actuator/ratelimits").statusCode()).isEqualTo(404);
		}
		catch (IOException | InterruptedException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private List<Long> standing(GatewayJar gateway, String route, String client) throws Exception {
		HttpResponse<String> response = send(gateway, "GET", clientPath(route, client));
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		List<Long> remaining = new ArrayList<>();
		json(response).path("limits").forEach(limit -> remaining.add(limit.path("remaining").asLong()));
		return remaining;
	}

	/** The client URL-encoded whole, {@code /} included, so any key travels as one path segment. */
	private static String clientPath(String route, String client) {
		return "/actuator/ratelimits/" + route + "/"
				+ URLEncoder.encode(client, StandardCharsets.UTF_8).replace("+", "%20");
	}

	private int proxied(GatewayJar gateway, String route, String client) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/" + route + "/x"))
			.header("X-API-Key", client)
			.timeout(Duration.ofSeconds(5))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	private HttpResponse<String> send(GatewayJar gateway, String method, String path)
			throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.timeout(Duration.ofSeconds(5))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static JsonNode json(HttpResponse<String> response) {
		return JsonMapper.shared().readTree(response.body());
	}

	private void flushRedis() {
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + this.redis.port());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			connection.sync().flushall();
		}
		finally {
			client.shutdown();
		}
	}

}
