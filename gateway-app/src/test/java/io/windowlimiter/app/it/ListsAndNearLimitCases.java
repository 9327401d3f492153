package io.windowlimiter.app.it;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.windowlimiter.core.key.ClientKeyHash;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Allow and deny lists, operators' blocks and exemptions, and near-limit, through two gateway-app jars on
 * one real {@code redis-server}, over HTTP: lists written in the route file and in the gateway's properties
 * hold on both instances with no Redis key written for a listed client; a block or exemption posted to one
 * instance holds on the other within a second and is lifted there by a DELETE or a clear; near-limit is
 * counted and logged; a bad list entry stops the jar naming route and property.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class ListsAndNearLimitCases {

	private static final String HOUR = "1h";

	/** The gateway's lists and near-limit settings (the pair's, read by these tests only). */
	static final List<String> ARGS = List.of("--window-rate-limiter.deny=gateway-banned",
			"--window-rate-limiter.allow=gateway-vip,route-banned", "--window-rate-limiter.near-limit.share=0.6",
			"--window-rate-limiter.near-limit.log-interval=1h");

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final JarPair pair;

	private final List<GatewayJar> gateways;

	private final GatewayJar a;

	private final GatewayJar b;

	ListsAndNearLimitCases(JarPair pair) {
		this.pair = pair;
		this.gateways = pair.both();
		this.a = pair.a();
		this.b = pair.b();
	}

	static void routes(RouteFile routes) {
		routes.route("lists", RouteFile.with(RouteFile.with(RouteFile.limit("sliding-log", 2, HOUR), "deny",
				"route-banned,gateway-vip"), "allow", "partner"));
		routes.route("by-ip", "clientIpKeyResolver",
				RouteFile.with(RouteFile.limit("sliding-log", 1, HOUR), "allow", "127.0.0.0/8"));
		routes.route("rules", RouteFile.limit("sliding-log", 2, HOUR));
		routes.route("scoped", RouteFile.with(RouteFile.limit("sliding-log", 2, HOUR), "scope", "shared"));
		routes.route("near", RouteFile.with(RouteFile.limit("sliding-log", 5, HOUR), "name", "five"));
	}

	/**
	 * Denied (the route's list over the gateway's allow list, and the gateway's): 403 with an about:blank
	 * problem body and no Retry-After on both instances; allowed: past the route's limit of 2 on both,
	 * counted as exempt, and no key in Redis. Anyone else: the usual 429 at the limit.
	 */
	@Test
	void listsHoldOnBothInstancesWithoutRedis() throws Exception {
		for (GatewayJar gateway : this.gateways) {
			for (String client : List.of("route-banned", "gateway-banned", "gateway-vip")) {
				HttpResponse<String> denied = request(gateway, "lists", client);
				assertThat(denied.statusCode()).as(client + " through " + gateway).isEqualTo(403);
				assertThat(denied.headers().firstValue("Content-Type").orElse("")).isEqualTo("application/problem+json");
				assertThat(json(denied).path("title").asString()).isEqualTo("Forbidden");
				assertThat(json(denied).path("status").asInt()).isEqualTo(403);
				assertThat(denied.headers().firstValue("Retry-After")).isEmpty();
			}
		}
		long exemptBefore = this.a.decisions("exempt") + this.b.decisions("exempt");
		for (int i = 0; i < 6; i++) {
			HttpResponse<String> allowed = request((i % 2 == 0) ? this.a : this.b, "lists", "partner");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(allowed.headers().firstValue("RateLimit")).as("no limit asked").isEmpty();
		}
		assertThat(this.a.decisions("exempt") + this.b.decisions("exempt") - exemptBefore).isEqualTo(6);
		assertThat(keysNaming("partner")).as("nothing written to Redis").isEmpty();
		assertThat(keysNaming("banned")).isEmpty();
		String other = "other-" + this.run;
		assertThat(List.of(status(this.a, "lists", other), status(this.b, "lists", other), status(this.a, "lists", other)))
			.containsExactly(200, 200, 429);
	}

	/** Keyed by the client-IP resolver: the jar's clients are on loopback, allowed by range past a limit of 1. */
	@Test
	void aRangeAllowsTheClientIpResolversKeys() throws Exception {
		for (int i = 0; i < 4; i++) {
			assertThat(status((i % 2 == 0) ? this.a : this.b, "by-ip", "ignored")).isEqualTo(200);
		}
	}

	/**
	 * A 10-minute block posted to A: B refuses the client with 403 within a second, its Retry-After the time
	 * left; the client view on B says so; the change is logged where it was made. A DELETE (reset) through B
	 * lifts it: A serves the client within a second, with a fresh quota.
	 */
	@Test
	void aBlockPostedToOneInstanceHoldsOnTheOtherUntilAResetLiftsIt() throws Exception {
		String client = "blocked-" + this.run;
		assertThat(status(this.b, "rules", client)).isEqualTo(200);
		HttpResponse<String> blocked = send(this.a, "POST", clientPath("rules", client), "{\"block\": \"10m\"}");
		assertThat(blocked.statusCode()).as(blocked.body()).isEqualTo(200);
		assertThat(json(blocked).path("access").path("kind").asString()).isEqualTo("block");
		assertThat(json(blocked).path("instancesNotified").asLong()).isEqualTo(2);
		long postedAt = System.nanoTime();
		HttpResponse<String> refused = awaitStatus(this.b, "rules", client, 403, postedAt);
		assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow())).isBetween(590L, 600L);
		assertThat(json(refused).path("title").asString()).isEqualTo("Forbidden");
		JsonNode view = json(send(this.b, "GET", clientPath("rules", client)));
		assertThat(view.path("access").path("kind").asString()).isEqualTo("block");
		assertThat(view.path("access").path("source").asString()).isEqualTo("run-time");
		assertThat(view.path("access").path("expires").asString()).isNotEmpty();
		assertThat(Files.readString(this.a.log())).contains("Rate limits of client '" + hashed(client)
				+ "' on 'rules' blocked (403) until ");

		HttpResponse<String> reset = send(this.b, "DELETE", clientPath("rules", client));
		assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
		assertThat(json(reset).path("blockLifted").asBoolean()).isTrue();
		awaitStatus(this.a, "rules", client, 200, System.nanoTime());
		assertThat(status(this.b, "rules", client)).as("a fresh quota of 2").isEqualTo(200);
		assertThat(status(this.b, "rules", client)).isEqualTo(429);
		assertThat(absent(json(send(this.a, "GET", clientPath("rules", client))).path("access"))).isTrue();
	}

	/**
	 * An exemption on scope {@code shared} posted to B: A lets the client past the route's limit within a
	 * second; a clear through A limits it on B again within a second. One until a given time is shown with it.
	 */
	@Test
	void anExemptionOnAScopeHoldsOnTheOtherInstanceUntilCleared() throws Exception {
		String client = "exempt-" + this.run;
		HttpResponse<String> exempted = send(this.b, "POST", clientPath("shared", client), "{\"exempt\": true}");
		assertThat(exempted.statusCode()).as(exempted.body()).isEqualTo(200);
		assertThat(absent(json(exempted).path("access").path("expires"))).as("until cleared").isTrue();
		long postedAt = System.nanoTime();
		// until A has the exemption its answers are counted (a 200 among them): wait for an exempt one, no headers
		int countedBeforeKnown = 0;
		HttpResponse<String> onA = request(this.a, "scoped", client);
		while (onA.headers().firstValue("RateLimit").isPresent()
				&& System.nanoTime() - postedAt < Duration.ofSeconds(1).toNanos()) {
			countedBeforeKnown++;
			GatewayJar.sleep(20);
			onA = request(this.a, "scoped", client);
		}
		assertThat(onA.statusCode()).as("exempt through A within 1 s: " + onA.body()).isEqualTo(200);
		assertThat(onA.headers().firstValue("RateLimit")).as("an exempt answer has no rate-limit headers").isEmpty();
		int left = Math.max(0, 2 - countedBeforeKnown);
		for (int i = 0; i < 5; i++) {
			assertThat(status((i % 2 == 0) ? this.a : this.b, "scoped", client)).isEqualTo(200);
		}
		assertThat(Duration.ofNanos(System.nanoTime() - postedAt)).isLessThan(Duration.ofSeconds(10));
		HttpResponse<String> cleared = send(this.a, "POST", clientPath("shared", client), "{\"clear\": true}");
		assertThat(cleared.statusCode()).as(cleared.body()).isEqualTo(200);
		long clearedAt = System.nanoTime();
		// exempt answers carry no rate-limit headers and count nothing: the first limited one has them
		HttpResponse<String> limited = request(this.b, "scoped", client);
		while (limited.headers().firstValue("RateLimit").isEmpty()
				&& System.nanoTime() - clearedAt < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			limited = request(this.b, "scoped", client);
		}
		assertThat(limited.headers().firstValue("RateLimit").orElse("")).as("limited by B within 1 s of the clear")
			.contains(";r=" + Math.max(0, left - 1) + ";");
		assertThat(List.of(status(this.b, "scoped", client), status(this.a, "scoped", client)))
			.as("the route's 2 less the %d A counted before it knew, none used while exempt", countedBeforeKnown)
			.containsExactly((left == 2) ? 200 : 429, 429);
		assertThat(Files.readString(this.b.log())).contains("Rate limits of client '" + hashed(client)
				+ "' on 'shared' exempted from its limits for good");
		Instant tomorrow = Instant.now().plus(1, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS);
		HttpResponse<String> until = send(this.a, "POST", clientPath("scoped", client),
				"{\"exempt\": true, \"until\": \"" + tomorrow + "\"}");
		assertThat(until.statusCode()).as(until.body()).isEqualTo(200);
		Instant expires = Instant.parse(json(until).path("access").path("expires").asString());
		assertThat(Duration.between(tomorrow, expires).abs()).isLessThan(Duration.ofSeconds(2));
		awaitStatus(this.b, "scoped", client, 200, System.nanoTime());
		HttpResponse<String> tooFar = send(this.a, "POST", clientPath("scoped", client),
				"{\"exempt\": true, \"until\": \"2099-01-01T00:00:00Z\"}");
		assertThat(tooFar.statusCode()).as(tooFar.body()).isEqualTo(400);
		assertThat(json(tooFar).path("field").asString()).isEqualTo("until");
		assertThat(send(this.a, "POST", clientPath("scoped", client), "{\"clear\": true}").statusCode()).isEqualTo(200);
	}

	@Test
	void whatCannotBeBlockedIsA400NamingTheField() throws Exception {
		String client = "refused-" + this.run;
		HttpResponse<String> forGood = send(this.a, "POST", clientPath("rules", client), "{\"block\": true}");
		assertThat(forGood.statusCode()).isEqualTo(400);
		assertThat(json(forGood).path("field").asString()).isEqualTo("block");
		assertThat(json(forGood).path("error").asString()).contains("a block always ends");
		HttpResponse<String> both = send(this.a, "POST", clientPath("rules", client),
				"{\"block\": \"1m\", \"plan\": \"pro\"}");
		assertThat(both.statusCode()).isEqualTo(400);
		assertThat(json(both).path("error").asString()).contains("block is set beside plan");
		assertThat(absent(json(send(this.b, "GET", clientPath("rules", client))).path("access"))).isTrue();
	}

	/**
	 * 5 per hour at a share of 0.6: the 3rd, 4th and 5th count; the line is logged once per hour. First of
	 * all the pair's tests: the line is logged at most once an hour per gateway, whoever is near a limit.
	 */
	@Test
	@Order(1)
	void nearTheLimitIsCountedAndLoggedOnce() throws Exception {
		String client = "near-" + this.run;
		double before = nearLimit(this.a);
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			statuses.add(status(this.a, "near", client));
		}
		assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429);
		assertThat(nearLimit(this.a) - before).isEqualTo(3);
		String expected = "Client '" + hashed(client) + "' is near limit 'five' on route 'near': 2 of "
				+ "5 left (at most one such "
				+ "line per PT1H)";
		// written by the limiter's log thread, not the request's: moments after the answer
		long started = System.nanoTime();
		String log = Files.readString(this.a.log());
		while (!log.contains(expected) && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5)) {
			Thread.sleep(20);
			log = Files.readString(this.a.log());
		}
		assertThat(log).contains(expected);
		assertThat(log.lines().filter(line -> line.contains("is near limit"))).hasSize(1);
	}

	/** A bad entry in a route's list stops the jar, naming route, property and what is allowed. */
	@Test
	void aBadListEntryStopsTheJar() {
		RouteFile bad = new RouteFile(this.pair.downstream());
		bad.route("bad-list", RouteFile.with(RouteFile.limit("fixed-window", 10, "1m"), "deny", "\"ok,10.0.0.0/33\""));
		GatewayJar.Exited exited = GatewayJar.startRefused("bad-list", this.pair.redisPort(), bad.write(),
				Duration.ofSeconds(90));
		assertThat(exited.code()).as(exited.output()).isNotZero();
		assertThat(exited.output()).contains("APPLICATION FAILED TO START")
			.contains("window-rate-limiter.deny is 'ok,10.0.0.0/33': entry 1 '10.0.0.0/33' is not a valid address or "
					+ "range")
			.contains("'bad-list'");
	}

	private double nearLimit(GatewayJar gateway) {
		GatewayJar.Probe probe = gateway.get("/actuator/prometheus", Duration.ofSeconds(5));
		double sum = 0;
		for (String line : probe.body().split("\n")) {
			if (line.startsWith("gateway_ratelimit_near_limit_total{") && line.contains("route=\"near\"")) {
				sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
			}
		}
		return sum;
	}

	/** Redis keys whose name holds {@code text}. */
	private List<String> keysNaming(String text) {
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + this.pair.redisPort());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return connection.sync().keys("*" + text + "*");
		}
		finally {
			client.shutdown();
		}
	}

	/** Requests until the answer has this status; fails past 1 s after {@code since}. */
	private HttpResponse<String> awaitStatus(GatewayJar gateway, String route, String client, int expected, long since)
			throws Exception {
		HttpResponse<String> response = request(gateway, route, client);
		while (response.statusCode() != expected && System.nanoTime() - since < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			response = request(gateway, route, client);
		}
		assertThat(response.statusCode()).as("through " + gateway + " within 1 s: " + response.body()).isEqualTo(expected);
		return response;
	}

	private int status(GatewayJar gateway, String route, String client) throws Exception {
		return request(gateway, route, client).statusCode();
	}

	private HttpResponse<String> request(GatewayJar gateway, String route, String client) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/" + route + "/x"))
			.header("X-API-Key", client)
			.timeout(Duration.ofSeconds(5))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static String clientPath(String target, String client) {
		return "/actuator/ratelimits/" + target + "/" + URLEncoder.encode(client, StandardCharsets.UTF_8);
	}

	private HttpResponse<String> send(GatewayJar gateway, String method, String path, String json) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
			.method(method, (json != null) ? HttpRequest.BodyPublishers.ofString(json) : HttpRequest.BodyPublishers.noBody())
			.timeout(Duration.ofSeconds(5));
		if (json != null) {
			request.header("Content-Type", "application/json");
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> send(GatewayJar gateway, String method, String path) throws Exception {
		return send(gateway, method, path, null);
	}

	private static boolean absent(JsonNode node) {
		return node.isMissingNode() || node.isNull();
	}

	private static JsonNode json(HttpResponse<String> response) {
		return JsonMapper.shared().readTree(response.body());
	}

	/**
	 * The client as the gateway logs it: its X-API-Key is a credential, hashed where it enters the limiter (no
	 * secret is set here).
	 */
	private static String hashed(String client) {
		return new ClientKeyHash(null).of(client);
	}

}
