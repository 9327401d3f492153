package io.windowlimiter.app.it;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.assertj.core.api.SoftAssertions;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 44 item 6 on a packaged jar, either server: clients send their API keys as the official LLM SDKs
 * do ({@code Authorization: Bearer}, {@code x-api-key}) through a route keyed by {@code apiKeyResolver} and
 * one keyed by {@code headerKeyResolver} on {@code Authorization} ({@code key-header}); each is refused
 * once past its limit, read, reset and blocked through the {@code ratelimits} endpoint by the key as the
 * operator knows it. Then no key may be found in clear: not in any Redis key name nor in the operators'
 * assignments, not in the endpoint's answers, not in {@code /actuator/prometheus}, not in the jar's log.
 * Each route allows {@value #LIMIT} requests an hour.
 */
final class CredentialCase {

	static final int LIMIT = 3;

	/** Route args of each route: the exact sliding log, an hour (no window edge during the test). */
	static Map<String, Object> limit() {
		return RouteFile.limit("sliding-log", LIMIT, "1h");
	}

	/** What the jar is started with besides its routes: the endpoint exposed, near-limit lines logged. */
	static final List<String> ARGS = List.of(
			"--management.endpoints.web.exposure.include=health,prometheus,ratelimits",
			"--window-rate-limiter.key-header=Authorization", "--window-rate-limiter.near-limit.share=0.5",
			"--window-rate-limiter.near-limit.log-interval=1ms");

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final GatewayJar gateway;

	private final int redisPort;

	private final String apiRoute;

	private final String authorizationRoute;

	/** Keys of this run: fresh ones, so nothing found can come from another run. */
	private final List<String> secrets = new ArrayList<>();

	/**
	 * @param apiRoute the route keyed by apiKeyResolver, on path {@code /<id>/**}
	 * @param authorizationRoute the route keyed by headerKeyResolver on Authorization, on path {@code /<id>/**}
	 */
	CredentialCase(GatewayJar gateway, int redisPort, String apiRoute, String authorizationRoute) {
		this.gateway = gateway;
		this.redisPort = redisPort;
		this.apiRoute = apiRoute;
		this.authorizationRoute = authorizationRoute;
	}

	/** An API key as OpenAI's look: {@code sk-proj-} and 40 hex digits, 48 characters (under 64: kept plain before). */
	private String newKey(String prefix) {
		byte[] random = new byte[20];
		new SecureRandom().nextBytes(random);
		String key = prefix + HexFormat.of().formatHex(random);
		this.secrets.add(key);
		return key;
	}

	/** Runs the case; every finding is collected, then all are asserted. */
	void run(String hashPrefix) throws Exception {
		SoftAssertions softly = new SoftAssertions();
		String openAi = newKey("sk-proj-");
		String anthropic = newKey("sk-ant-api03-");
		String reader = newKey("sk-proj-");

		// one client whichever header it sends its key in: Bearer three times, then x-api-key is refused
		for (int i = 0; i < LIMIT; i++) {
			softly.assertThat(get(this.apiRoute, "Authorization", "Bearer " + openAi)).as("OpenAI SDK, request " + i)
				.isEqualTo(200);
		}
		softly.assertThat(get(this.apiRoute, "x-api-key", openAi)).as("the same key in x-api-key").isEqualTo(429);
		softly.assertThat(get(this.apiRoute, "Authorization", "Bearer " + openAi)).isEqualTo(429);
		softly.assertThat(get(this.apiRoute, "x-api-key", anthropic)).as("the Anthropic SDK's header").isEqualTo(200);
		for (int i = 0; i < LIMIT; i++) {
			softly.assertThat(get(this.authorizationRoute, "Authorization", "Bearer " + anthropic))
				.as("key-header Authorization, request " + i)
				.isEqualTo(200);
		}
		softly.assertThat(get(this.authorizationRoute, "Authorization", "Bearer " + anthropic)).isEqualTo(429);
		softly.assertThat(get(this.authorizationRoute, "Authorization", "Bearer " + anthropic)).isEqualTo(429);

		// the endpoint read by the raw key finds the counters, and names the client by its hash
		JsonNode before = json(endpoint("GET", clientPath(this.apiRoute, reader), null));
		softly.assertThat(get(this.apiRoute, "Authorization", "Bearer " + reader)).isEqualTo(200);
		JsonNode after = json(endpoint("GET", clientPath(this.apiRoute, reader), null));
		softly.assertThat(remaining(before)).as("remaining before the client's request, " + before).isEqualTo(LIMIT);
		softly.assertThat(remaining(after)).as("remaining after it, " + after).isEqualTo(LIMIT - 1);
		softly.assertThat(after.path("client").asString()).as("the client as the endpoint names it").startsWith(hashPrefix);
		JsonNode refused = json(endpoint("GET", clientPath(this.authorizationRoute, "Bearer " + anthropic), null));
		softly.assertThat(remaining(refused)).as("read by the whole header value, " + refused).isZero();
		softly.assertThat(refused.path("client").asString()).startsWith(hashPrefix);
		JsonNode top = json(endpoint("GET", "/actuator/ratelimits/" + this.authorizationRoute, null)).path("topDenied");
		softly.assertThat(top.path("clients").get(0).path("client").asString()).as("topDenied, " + top)
			.isEqualTo(refused.path("client").asString());

		// a reset and a block by the raw key (logged, audited, stored in Redis) reach the client
		HttpResponse<String> reset = endpoint("DELETE", clientPath(this.apiRoute, openAi), null);
		softly.assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
		softly.assertThat(json(reset).path("deletedKeys").asLong()).as(reset.body()).isEqualTo(1);
		softly.assertThat(get(this.apiRoute, "Authorization", "Bearer " + openAi)).as("after the reset").isEqualTo(200);
		HttpResponse<String> block = endpoint("POST", clientPath(this.apiRoute, reader), "{\"block\": \"10m\"}");
		softly.assertThat(block.statusCode()).as(block.body()).isEqualTo(200);
		awaitStatus(softly, this.apiRoute, reader, 403);

		// nowhere in clear
		List<String> places = new ArrayList<>();
		try (RedisConnection redis = new RedisConnection(this.redisPort)) {
			List<String> keys = redis.connection().sync().keys("*");
			places.add("Redis key names " + keys);
			softly.assertThat(keys).as("Redis keys of the clients").anyMatch(key -> key.startsWith("wrl:{" + hashPrefix));
			places.add("the operators' assignments " + redis.connection().sync().hkeys("wrl:{assignments}"));
		}
		places.add("the endpoint " + endpoint("GET", "/actuator/ratelimits", null).body());
		places.add("the route " + endpoint("GET", "/actuator/ratelimits/" + this.apiRoute, null).body());
		places.add("the route " + endpoint("GET", "/actuator/ratelimits/" + this.authorizationRoute, null).body());
		places.add("the block " + block.body());
		places.add("the reset " + reset.body());
		places.add("/actuator/prometheus " + endpoint("GET", "/actuator/prometheus", null).body());
		// the near-limit and operators' lines are written on another thread: give them a moment
		GatewayJar.sleep(500);
		String log = Files.readString(this.gateway.log());
		places.add("the jar's log " + log);
		softly.assertThat(log).as("the operators' lines name the client by its hash")
			.contains("Rate limits of client '" + hashPrefix);
		for (String place : places) {
			for (String secret : this.secrets) {
				softly.assertThat(place).as("a key in clear in " + place.substring(0, Math.min(place.length(), 60)))
					.doesNotContain(secret);
			}
		}
		softly.assertAll();
	}

	/** The gateway applies a block within a Redis round trip on the instance that made it; asserted within 5 s. */
	private void awaitStatus(SoftAssertions softly, String route, String key, int status) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		int last = get(route, "Authorization", "Bearer " + key);
		while (last != status && System.nanoTime() < deadline) {
			GatewayJar.sleep(100);
			last = get(route, "Authorization", "Bearer " + key);
		}
		softly.assertThat(last).as("after the block").isEqualTo(status);
	}

	private static long remaining(JsonNode standing) {
		return standing.path("limits").get(0).path("remaining").asLong(-1);
	}

	private int get(String route, String header, String value) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.gateway.port() + "/" + route
				+ "/x"))
			.header(header, value)
			.timeout(Duration.ofSeconds(5))
			.build();
		return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	private HttpResponse<String> endpoint(String method, String path, String json)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.gateway.port() + path))
			.method(method, (json != null) ? HttpRequest.BodyPublishers.ofString(json) : HttpRequest.BodyPublishers.noBody())
			.timeout(Duration.ofSeconds(5));
		if (json != null) {
			request.header("Content-Type", "application/json");
		}
		return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static String clientPath(String route, String client) {
		return "/actuator/ratelimits/" + route + "/" + URLEncoder.encode(client, StandardCharsets.UTF_8).replace("+", "%20");
	}

	private static JsonNode json(HttpResponse<String> response) {
		return JsonMapper.shared().readTree(response.body());
	}

	/** A Lettuce connection to the test's Redis, closed with its client. */
	private record RedisConnection(RedisClient client, StatefulRedisConnection<String, String> connection)
			implements AutoCloseable {

		RedisConnection(int port) {
			this(RedisClient.create("redis://127.0.0.1:" + port));
		}

		private RedisConnection(RedisClient client) {
			this(client, client.connect());
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

}
