package io.windowlimiter.app.it;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.windowlimiter.core.key.ClientKeyHash;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} actuator endpoint of two gateway-app jars on one real {@code redis-server},
 * over HTTP: exposed the way a user would ({@code management.endpoints.web.exposure.include}), read
 * through one instance while requests go through the other, and a reset made through one instance
 * served by the other at once, deny cache and all. Plans, overrides and clears posted to one instance
 * are applied by the other within a second, on routes and on a scope. Plans {@code free} (3 per route, 5
 * in scope {@code api}) and {@code pro} (6 and 10) decide routes {@code ops-orders} and {@code ops-search}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RateLimitsEndpointCases {

	private static final String EXPOSE = "--management.endpoints.web.exposure.include=health,prometheus,ratelimits";

	/** An hour: no window edge or refill during the test, and a denial the deny cache keeps that long. */
	private static final String HOUR = "1h";

	private static final String FREE = "\"per-route\";q=3;w=3600, \"daily\";q=5;w=3600";

	private static final String PRO = "\"per-route\";q=6;w=3600, \"daily\";q=10;w=3600";

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final JarPair pair;

	private final GatewayJar a;

	private final GatewayJar b;

	RateLimitsEndpointCases(JarPair pair) {
		this.pair = pair;
		this.a = pair.a();
		this.b = pair.b();
	}

	/** The pair's arguments these cases need: the endpoint exposed, plans {@code free} and {@code pro}. */
	static List<String> args() {
		List<String> args = new ArrayList<>(List.of(EXPOSE));
		args.addAll(plan("free", 3, 5));
		args.addAll(plan("pro", 6, 10));
		return args;
	}

	static void routes(RouteFile routes) {
		routes.route("ops-read", RouteFile.limit("sliding-log", 5, HOUR));
		routes.route("ops-deny", RouteFile.limit("sliding-log", 3, HOUR));
		routes.route("ops-bucket", RouteFile.with(RouteFile.limit("token-bucket", 10, "1m"), "burst", 4));
		routes.route("ops-orders", Map.<String, Object>of("plan", "free"));
		routes.route("ops-search", Map.<String, Object>of("plan", "free"));
		routes.route("ops-expiry", RouteFile.limit("fixed-window", 5, "2s"));
		routes.route("ops-costly", RouteFile.with(RouteFile.limit("sliding-log", 100, HOUR), "cost", 10));
		routes.route("ops-fixed", RouteFile.limit("fixed-window", 5, "4s"));
		routes.route("ops-refill", RouteFile.with(RouteFile.limit("token-bucket", 2, "4s"), "burst", 2));
		routes.route("ops-hourly", RouteFile.limit("fixed-window", 5, HOUR));
	}

	/** A plan as its declaration's arguments: sliding logs, exact, so that no window edge matters. */
	private static List<String> plan(String name, int perRoute, int daily) {
		String limits = "--window-rate-limiter.plans." + name + ".limits";
		return List.of(limits + "[0].name=per-route", limits + "[0].algorithm=sliding-log", limits + "[0].limit=" + perRoute,
				limits + "[0].window=" + HOUR, limits + "[1].name=daily", limits + "[1].algorithm=sliding-log",
				limits + "[1].limit=" + daily, limits + "[1].window=" + HOUR, limits + "[1].scope=api");
	}

	@Test
	void listsEveryRouteWithItsLimits() throws Exception {
		HttpResponse<String> response = send(this.a, "GET", "/actuator/ratelimits");
		assertThat(response.statusCode()).isEqualTo(200);
		JsonNode routes = json(response).path("routes");
		// the pair also serves other cases' routes: these cases' own are the ops- ones
		assertThat(routes.propertyNames().stream().filter((name) -> name.startsWith("ops-"))).containsExactlyInAnyOrder("ops-read", "ops-deny", "ops-bucket", "ops-orders",
				"ops-search", "ops-expiry", "ops-costly", "ops-fixed", "ops-refill", "ops-hourly");
		JsonNode bucket = routes.path("ops-bucket").path("limits").get(0);
		assertThat(bucket.path("algorithm").asString()).isEqualTo("token-bucket");
		assertThat(bucket.path("limit").asLong()).isEqualTo(10);
		assertThat(bucket.path("window").asString()).isEqualTo("PT1M");
		assertThat(bucket.path("burst").asLong()).isEqualTo(4);
		JsonNode read = routes.path("ops-read").path("limits").get(0);
		assertThat(read.path("algorithm").asString()).isEqualTo("sliding-log");
		assertThat(read.path("logStorage").asString()).isEqualTo("ring");
		JsonNode all = json(response);
		assertThat(all.path("scopes").path("api").path("routes").toString()).isEqualTo("[\"ops-orders\",\"ops-search\"]");
		assertThat(all.path("plans").propertyNames()).containsExactly("free", "pro");
		assertThat(all.path("plans").path("pro").path("limits").get(1).path("scope").asString()).isEqualTo("api");
	}

	@Test
	void aPlanPostedToOneInstanceIsAppliedByTheOtherWithinASecondAndCleared() throws Exception {
		String client = "upgraded-" + this.run;
		assertThat(policy(this.b, "ops-orders", client)).isEqualTo(FREE);
		HttpResponse<String> assigned = send(this.a, "POST", clientPath("ops-orders", client), "{\"plan\": \"pro\"}");
		assertThat(assigned.statusCode()).as(assigned.body()).isEqualTo(200);
		assertThat(json(assigned).path("instancesNotified").asLong()).as("both instances heard it").isEqualTo(2);
		awaitPolicy(this.b, "ops-orders", client, PRO);
		JsonNode read = json(send(this.b, "GET", clientPath("ops-orders", client)));
		assertThat(read.path("plan").asString()).isEqualTo("pro");
		assertThat(read.path("assignment").path("plan").asString()).isEqualTo("pro");
		assertThat(policy(this.b, "ops-search", client)).as("on ops-orders alone").isEqualTo(FREE);

		HttpResponse<String> cleared = send(this.b, "POST", clientPath("ops-orders", client), "{\"clear\": true}");
		assertThat(cleared.statusCode()).as(cleared.body()).isEqualTo(200);
		awaitPolicy(this.a, "ops-orders", client, FREE);
		// each change is logged where it was made, with who asked
		assertThat(Files.readString(this.a.log())).contains("Rate limits of client '" + hashed(client)
				+ "' on 'ops-orders' put on plan 'pro' for good by an unauthenticated caller");
		assertThat(Files.readString(this.b.log())).contains("Rate limits of client '" + hashed(client)
				+ "' on 'ops-orders' cleared of any plan or override, block or exemption by an unauthenticated caller");
		assertThat(json(send(this.a, "GET", clientPath("ops-orders", client))).path("plan").asString()).isEqualTo("free");
	}

	/** Limits of its own through A: B denies at the new limit within a second; then it expires everywhere. */
	@Test
	void anOverridePostedToOneInstanceIsDeniedAtByTheOtherUntilItExpires() throws Exception {
		String client = "throttled-" + this.run;
		long postedAt = System.nanoTime();
		HttpResponse<String> override = send(this.a, "POST", clientPath("ops-orders", client),
				"{\"limit\": 2, \"window\": \"1h\", \"algorithm\": \"fixed-window\", \"name\": \"tight\", \"expires\": \"4s\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		assertThat(json(override).path("assignment").path("expires").asString()).isNotEmpty();
		// the first request B decides by the override is the first it counts
		awaitPolicy(this.b, "ops-orders", client, "\"tight\";q=2;w=3600");
		assertThat(proxied(this.b, "ops-orders", client)).isEqualTo(200);
		assertThat(proxied(this.b, "ops-orders", client)).isEqualTo(429);
		assertThat(proxied(this.a, "ops-orders", client)).isEqualTo(429);
		assertThat(Duration.ofNanos(System.nanoTime() - postedAt)).as("checked before it expires").isLessThan(Duration.ofSeconds(4));

		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!FREE.equals(policy(this.b, "ops-orders", client)) && System.nanoTime() < deadline) {
			GatewayJar.sleep(100);
		}
		assertThat(policy(this.b, "ops-orders", client)).as("expired").isEqualTo(FREE);
		assertThat(Duration.ofNanos(System.nanoTime() - postedAt)).as("not before it was due").isGreaterThan(Duration.ofSeconds(4));
	}

	/** A plan on scope api applies on every route naming it; the scope reads and resets as a target. */
	@Test
	void aScopeIsATarget() throws Exception {
		String client = "scoped-" + this.run;
		assertThat(proxied(this.a, "ops-orders", client)).isEqualTo(200);
		assertThat(proxied(this.a, "ops-search", client)).isEqualTo(200);
		HttpResponse<String> read = send(this.b, "GET", clientPath("api", client));
		assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
		JsonNode daily = json(read).path("limits");
		assertThat(daily).hasSize(1);
		assertThat(daily.get(0).path("name").asString()).isEqualTo("daily");
		assertThat(daily.get(0).path("remaining").asLong()).as("both routes count in the scope").isEqualTo(3);

		assertThat(send(this.a, "POST", clientPath("api", client), "{\"plan\": \"pro\"}").statusCode()).isEqualTo(200);
		awaitPolicy(this.b, "ops-search", client, PRO);
		assertThat(policy(this.b, "ops-orders", client)).isEqualTo(PRO);
		JsonNode scoped = json(send(this.b, "GET", clientPath("api", client)));
		assertThat(scoped.path("assignment").path("target").asString()).isEqualTo("api");
		assertThat(scoped.path("limits").get(0).path("limit").asLong()).isEqualTo(10);
		assertThat(json(send(this.b, "GET", "/actuator/ratelimits/api")).path("routes").toString())
			.isEqualTo("[\"ops-orders\",\"ops-search\"]");

		HttpResponse<String> reset = send(this.a, "DELETE", clientPath("api", client));
		assertThat(json(reset).path("deletedKeys").asLong()).as(reset.body()).isEqualTo(1);
		assertThat(json(send(this.b, "GET", clientPath("api", client))).path("limits").get(0).path("remaining").asLong())
			.isEqualTo(10);
		assertThat(send(this.a, "POST", clientPath("api", client), "{\"clear\": true}").statusCode()).isEqualTo(200);
		awaitPolicy(this.b, "ops-search", client, FREE);
	}

	/**
	 * An override of 4 on scope api (M6): exactly 4 pass across ops-orders and ops-search and both instances,
	 * each route's own limit stays, a read of the scope shows the override, and a reset of the scope through
	 * one instance serves the client again on both routes and both instances, deny caches and all.
	 */
	@Test
	void anOverrideOnAScopeCountsOnceAcrossItsRoutesAndReadsAndResetsThere() throws Exception {
		String client = "scope-override-" + this.run;
		HttpResponse<String> override = send(this.a, "POST", clientPath("api", client), "{\"limit\": 4, \"window\": \"1h\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		// seen by B without spending anything: a read of the scope shows the override's limit
		long started = System.nanoTime();
		JsonNode read = json(send(this.b, "GET", clientPath("api", client)));
		while (read.path("limits").path(0).path("limit").asLong() != 4
				&& System.nanoTime() - started < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			read = json(send(this.b, "GET", clientPath("api", client)));
		}
		assertThat(read.path("limits")).as(read.toString()).hasSize(1);
		assertThat(read.path("limits").get(0).path("name").asString()).isEqualTo("daily");
		assertThat(read.path("limits").get(0).path("limit").asLong()).isEqualTo(4);
		assertThat(read.path("assignment").path("target").asString()).isEqualTo("api");

		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			statuses.add(proxied((i % 2 == 0) ? this.a : this.b, (i / 2 % 2 == 0) ? "ops-orders" : "ops-search", client));
		}
		assertThat(statuses).as("4 across both routes and instances").containsExactly(200, 200, 200, 200, 429, 429, 429, 429);
		assertThat(json(send(this.b, "GET", clientPath("api", client))).path("limits").get(0).path("remaining").asLong())
			.isZero();

		HttpResponse<String> reset = send(this.a, "DELETE", clientPath("api", client));
		assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
		assertThat(json(reset).path("deletedKeys").asLong()).as(reset.body()).isEqualTo(1);
		// Redis decides again everywhere: served on both routes, then refused by each route's own limit (3
		// used), not by a cached daily denial. B forgets its denial when the change broadcast reaches it, a few ms
		// after A's answer: until then it refuses from its deny cache, which counts nothing
		long forgotten = System.nanoTime();
		int first = proxied(this.b, "ops-orders", client);
		while (first == 429 && System.nanoTime() - forgotten < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			first = proxied(this.b, "ops-orders", client);
		}
		assertThat(first).isEqualTo(200);
		assertThat(proxied(this.a, "ops-search", client)).isEqualTo(200);
		for (GatewayJar gateway : List.of(this.a, this.b)) {
			String route = (gateway == this.a) ? "ops-orders" : "ops-search";
			HttpResponse<Void> refused = request(gateway, route, client);
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.headers().firstValue("RateLimit").orElse("")).as(route + " through " + gateway)
				.startsWith("\"per-route\";r=0;");
		}
		assertThat(send(this.a, "POST", clientPath("api", client), "{\"clear\": true}").statusCode()).isEqualTo(200);
	}

	/**
	 * A 3 s override of 20 per hour used past the route's own 5 per 2 s: once it expires the client is
	 * under the route's window again, served within that window, not locked out for the override's hour.
	 * Needs the fixed window's restatement of branch policy-lua (M2).
	 */
	@Test
	void anExpiredOverrideLeavesTheClientUnderItsOwnWindowNotLockedOut() throws Exception {
		String client = "expiring-" + this.run;
		HttpResponse<String> override = send(this.a, "POST", clientPath("ops-expiry", client),
				"{\"limit\": 20, \"window\": \"1h\", \"algorithm\": \"fixed-window\", \"expires\": \"3s\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		long postedAt = System.nanoTime();
		for (int i = 0; i < 8; i++) {
			assertThat(proxied(this.a, "ops-expiry", client)).isEqualTo(200);
		}
		assertThat(Duration.ofNanos(System.nanoTime() - postedAt)).as("used before it expires").isLessThan(Duration.ofSeconds(3));
		String own = "\"ops-expiry\";q=5;w=2";
		while (!own.equals(policy(this.b, "ops-expiry", client))
				&& System.nanoTime() - postedAt < Duration.ofSeconds(5).toNanos()) {
			GatewayJar.sleep(50);
		}
		long expiredAt = System.nanoTime();
		assertThat(policy(this.b, "ops-expiry", client)).as("expired").isEqualTo(own);
		int status = proxied(this.b, "ops-expiry", client);
		while (status != 200 && System.nanoTime() - expiredAt < Duration.ofMillis(2_500).toNanos()) {
			GatewayJar.sleep(50);
			status = proxied(this.b, "ops-expiry", client);
		}
		assertThat(status).as("served within the route's own 2 s window after the override ended").isEqualTo(200);
	}

	/**
	 * An override a request of the route's cost cannot fit (M1): a 400 naming {@code limit} and the cost,
	 * nothing stored. Before, it answered 200 and every request of the client errored in the script and was
	 * let through by the fail-mode (6 of 6). An override that fits lets exactly its limit through on B.
	 */
	@Test
	void anOverrideBelowTheRoutesCostIsRefusedAndOneThatFitsLetsExactlyItsLimitThrough() throws Exception {
		String client = "costly-" + this.run;
		HttpResponse<String> refused = send(this.a, "POST", clientPath("ops-costly", client),
				"{\"limit\": 5, \"window\": \"1m\", \"algorithm\": \"sliding-log\"}");
		assertRefused(refused, "limit", "is '5', less than the cost '10' of a request on route 'ops-costly'");
		JsonNode read = json(send(this.b, "GET", clientPath("ops-costly", client)));
		assertThat(read.path("assignment").isMissingNode() || read.path("assignment").isNull()).as(read.toString())
			.isTrue();
		assertThat(read.path("limits").get(0).path("limit").asLong()).as("nothing was stored").isEqualTo(100);

		HttpResponse<String> fits = send(this.a, "POST", clientPath("ops-costly", client),
				"{\"limit\": 30, \"window\": \"1m\", \"algorithm\": \"sliding-log\"}");
		assertThat(fits.statusCode()).as(fits.body()).isEqualTo(200);
		awaitLimit(this.b, "ops-costly", client, 30);
		long failModeAnswers = this.b.failModeAnswers();
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			statuses.add(proxied(this.b, "ops-costly", client));
		}
		assertThat(statuses).as("30 at a cost of 10 each").containsExactly(200, 200, 200, 429, 429);
		assertThat(this.b.failModeAnswers()).as("Redis decided each, no script error").isEqualTo(failModeAnswers);
		assertThat(send(this.a, "POST", clientPath("ops-costly", client), "{\"clear\": true}").statusCode())
			.isEqualTo(200);
	}

	/**
	 * An override of 20 per hour on a route of 5 per 4 s, used up, then cleared through A (M2): on B the
	 * client is refused for the rest of the route's current window (what it used stays used: no fresh 5),
	 * then served within the route's own 4 s, not locked out for the override's hour, and given exactly 5.
	 */
	@Test
	void aClearedFixedWindowOverrideLeavesTheClientUnderTheRoutesWindowWithWhatItUsed() throws Exception {
		String client = "downgraded-" + this.run;
		HttpResponse<String> override = send(this.a, "POST", clientPath("ops-fixed", client),
				"{\"limit\": 20, \"window\": \"1h\", \"algorithm\": \"fixed-window\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		awaitLimit(this.b, "ops-fixed", client, 20);
		for (int i = 0; i < 20; i++) {
			assertThat(proxied(this.b, "ops-fixed", client)).as("request " + (i + 1)).isEqualTo(200);
		}
		assertThat(proxied(this.b, "ops-fixed", client)).isEqualTo(429);

		HttpResponse<String> cleared = send(this.a, "POST", clientPath("ops-fixed", client), "{\"clear\": true}");
		assertThat(cleared.statusCode()).as(cleared.body()).isEqualTo(200);
		long clearedAt = System.nanoTime();
		awaitLimit(this.b, "ops-fixed", client, 5);
		HttpResponse<Void> first = request(this.b, "ops-fixed", client);
		assertThat(first.statusCode()).as("the 20 used count as the route's 5 in its current window").isEqualTo(429);
		assertThat(first.headers().firstValue("RateLimit-Policy").orElse("")).isEqualTo("\"ops-fixed\";q=5;w=4");
		int status = first.statusCode();
		while (status != 200 && System.nanoTime() - clearedAt < Duration.ofMillis(5_000).toNanos()) {
			GatewayJar.sleep(50);
			status = proxied(this.b, "ops-fixed", client);
		}
		assertThat(status).as("served within the route's own 4 s window (and a second's grace)").isEqualTo(200);
		int served = 1;
		while (proxied(this.b, "ops-fixed", client) == 200 && served < 10) {
			served++;
		}
		assertThat(served).as("the route's 5 in its next window, no more").isEqualTo(5);
	}

	/**
	 * A token bucket downgraded (M2): an override of 100 per hour with a burst of 50, used up (its TAT half an
	 * hour ahead), then cleared through A. On B the client waits at most the route's own full refill (4 s:
	 * 2 per 4 s, burst 2), not the override's half hour, and is not handed a full bucket either.
	 */
	@Test
	void aClearedTokenBucketOverrideWaitsAtMostTheRoutesRefill() throws Exception {
		String client = "drained-" + this.run;
		HttpResponse<String> override = send(this.a, "POST", clientPath("ops-refill", client),
				"{\"limit\": 100, \"window\": \"1h\", \"algorithm\": \"token-bucket\", \"burst\": 50}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		awaitLimit(this.b, "ops-refill", client, 100);
		for (int i = 0; i < 50; i++) {
			assertThat(proxied(this.b, "ops-refill", client)).as("request " + (i + 1)).isEqualTo(200);
		}
		assertThat(proxied(this.b, "ops-refill", client)).isEqualTo(429);

		HttpResponse<String> cleared = send(this.a, "POST", clientPath("ops-refill", client), "{\"clear\": true}");
		assertThat(cleared.statusCode()).as(cleared.body()).isEqualTo(200);
		long clearedAt = System.nanoTime();
		awaitLimit(this.b, "ops-refill", client, 2);
		assertThat(proxied(this.b, "ops-refill", client)).as("the bucket is empty, not refilled by the change")
			.isEqualTo(429);
		int status = 429;
		while (status != 200 && System.nanoTime() - clearedAt < Duration.ofMillis(5_000).toNanos()) {
			GatewayJar.sleep(50);
			status = proxied(this.b, "ops-refill", client);
		}
		assertThat(status).as("served within the route's own 4 s refill (and a second's grace)").isEqualTo(200);
		assertThat(Duration.ofNanos(System.nanoTime() - clearedAt)).as("one request's interval (2 s) first")
			.isGreaterThan(Duration.ofMillis(1_500));
		assertThat(proxied(this.b, "ops-refill", client)).as("one at a time as the route refills").isEqualTo(429);
	}

	/**
	 * An unlock (M2): a client used up on 5 per hour, refused from B's deny cache, is given 100 per minute
	 * through A and is served by B at once, its 5 used still counted (94 left after the first).
	 */
	@Test
	void anOverrideUnlocksAUsedUpClientOnTheOtherInstanceAtOnce() throws Exception {
		String client = "unlocked-" + this.run;
		for (int i = 0; i < 5; i++) {
			assertThat(proxied(this.b, "ops-hourly", client)).isEqualTo(200);
		}
		assertThat(proxied(this.b, "ops-hourly", client)).isEqualTo(429);
		assertThat(proxied(this.b, "ops-hourly", client)).as("refused for the hour").isEqualTo(429);

		HttpResponse<String> override = send(this.a, "POST", clientPath("ops-hourly", client),
				"{\"limit\": 100, \"window\": \"1m\", \"algorithm\": \"fixed-window\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		long postedAt = System.nanoTime();
		HttpResponse<Void> response = request(this.b, "ops-hourly", client);
		while (response.statusCode() != 200 && System.nanoTime() - postedAt < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			response = request(this.b, "ops-hourly", client);
		}
		assertThat(response.statusCode()).as("served by B within 1 s of the override").isEqualTo(200);
		assertThat(response.headers().firstValue("RateLimit").orElse("")).as("the 5 used still count").contains(";r=94;");
		assertThat(send(this.a, "POST", clientPath("ops-hourly", client), "{\"clear\": true}").statusCode())
			.isEqualTo(200);
	}

	/**
	 * A window without a unit in the jar's route file ({@code window: 60}, 60 ms) stops start-up with Boot's
	 * failure analysis naming the route, the property and what was meant; the JVM exits non-zero.
	 */
	@Test
	void aWindowWithoutAUnitStopsTheJarWithAFailureAnalysis() {
		RouteFile bare = new RouteFile(this.pair.downstream());
		bare.route("ops-bare", RouteFile.limit("fixed-window", 10, "60"));
		GatewayJar.Exited exited = GatewayJar.startRefused("ops-bare", this.pair.redisPort(), bare.write(),
				Duration.ofSeconds(60));
		assertThat(exited.code()).as(exited.output()).isNotZero();
		assertThat(exited.output()).contains("APPLICATION FAILED TO START")
			.contains("The rate limit of route 'ops-bare' is invalid: window-rate-limiter.window is '60', a number "
					+ "without a unit, which would mean 60 ms.")
			.contains("Set window-rate-limiter.window of route 'ops-bare' to a duration with its unit: did you mean 60s?")
			.doesNotContain("\tat io.windowlimiter");
	}

	/**
	 * The endpoint's answers it has at hand (an unknown target's 404) on keep-alive connections, one request
	 * at a time: every one is answered. Answered synchronously they can stop the connection for good on
	 * Reactor Netty 1.3.6 (reactor/reactor-netty#4361): seen as a DELETE after such a 404 timing out.
	 */
	@Test
	void everyReadyAnswerOfTheEndpointOnAKeepAliveConnectionIsAnswered() throws Exception {
		for (int c = 0; c < 10; c++) {
			try (KeepAliveConnection connection = KeepAliveConnection.open(this.a.port(), Duration.ofSeconds(2))) {
				for (int i = 0; i < 100; i++) {
					String path = (i % 2 == 0) ? "/actuator/ratelimits/nope/someone" : "/actuator/ratelimits/ops-read";
					assertThat(connection.get(path, "reader-" + this.run).status()).as("connection " + c + ", request " + i)
						.isIn(200, 404);
				}
			}
		}
	}

	/** Reads the client on the target (spending nothing) until its first limit is this one; fails past 1 s. */
	private void awaitLimit(GatewayJar gateway, String target, String client, long limit) throws Exception {
		long started = System.nanoTime();
		JsonNode read = json(send(gateway, "GET", clientPath(target, client)));
		while (read.path("limits").path(0).path("limit").asLong() != limit
				&& System.nanoTime() - started < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			read = json(send(gateway, "GET", clientPath(target, client)));
		}
		assertThat(read.path("limits").path(0).path("limit").asLong()).as("read through " + gateway + ": " + read)
			.isEqualTo(limit);
	}

	/**
	 * A new instance (a restart) holds a blocked client from its first request: assignments load before it
	 * serves. Started as the app starts by default, it does not expose the endpoint either (health and
	 * prometheus only): one jar start for both, as starting one costs seconds.
	 */
	@Test
	void aRestartedInstanceHoldsAnOverriddenClientFromItsFirstRequestAndHidesTheEndpointByDefault() throws Exception {
		String client = "held-" + this.run;
		HttpResponse<String> override = send(this.a, "POST", clientPath("ops-read", client),
				"{\"limit\": 1, \"window\": \"1h\", \"algorithm\": \"sliding-log\", \"name\": \"held\"}");
		assertThat(override.statusCode()).as(override.body()).isEqualTo(200);
		assertThat(proxied(this.a, "ops-read", client)).isEqualTo(200);
		assertThat(proxied(this.a, "ops-read", client)).isEqualTo(429);
		List<String> args = new ArrayList<>(plan("free", 3, 5));
		args.addAll(plan("pro", 6, 10));
		try (GatewayJar restarted = GatewayJar.start("ops-restarted", this.pair.redisPort(), this.pair.routes(),
				args.toArray(String[]::new))) {
			HttpResponse<Void> first = request(restarted, "ops-read", client);
			assertThat(first.statusCode()).as("the first request after the restart").isEqualTo(429);
			assertThat(first.headers().firstValue("RateLimit-Policy").orElse("")).isEqualTo("\"held\";q=1;w=3600");
			assertThat(send(restarted, "GET", "/actuator/ratelimits").statusCode()).as("not exposed by default")
				.isEqualTo(404);
		}
		assertThat(send(this.a, "POST", clientPath("ops-read", client), "{\"clear\": true}").statusCode()).isEqualTo(200);
	}

	@Test
	void whatCannotBeAssignedIsA400NamingTheField() throws Exception {
		String client = "refused-" + this.run;
		assertRefused(send(this.a, "POST", clientPath("ops-orders", client), "{\"plan\": \"gold\"}"), "plan",
				"plan is 'gold'; allowed: one of free, pro");
		assertRefused(send(this.a, "POST", clientPath("ops-orders", client), "{\"limit\": 50, \"window\": \"soon\"}"),
				"window", "window is 'soon'; allowed: a duration of whole milliseconds");
		assertRefused(send(this.a, "POST", clientPath("ops-orders", client), "{\"limit\": \"lots\", \"window\": \"1m\"}"),
				"limit", "limit is 'lots'; allowed: a whole number");
		assertRefused(send(this.a, "POST", clientPath("ops-orders", client),
				"{\"limit\": 5, \"window\": \"1m\", \"algorithm\": \"leaky-bucket\"}"), "algorithm",
				"algorithm is 'leaky-bucket'; allowed: one of fixed-window, sliding-log");
		assertRefused(send(this.a, "POST", clientPath("ops-orders", client), "{\"plan\": \"pro\", \"expires\": \"-1h\"}"),
				"expires", "expires is '-1h'");
		assertRefused(send(this.a, "POST", clientPath("ops-read", client), "{\"plan\": \"pro\"}"), "plan",
				"limits of its own");
		assertThat(json(send(this.b, "GET", clientPath("ops-orders", client))).path("plan").asString())
			.as("nothing was assigned").isEqualTo("free");
	}

	private static void assertRefused(HttpResponse<String> response, String field, String message) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		assertThat(json(response).path("field").asString()).isEqualTo(field);
		assertThat(json(response).path("error").asString()).contains(message);
	}

	/** Proxies requests through the gateway until it answers with this policy; fails past 1 s. */
	private void awaitPolicy(GatewayJar gateway, String route, String client, String expected) throws Exception {
		long started = System.nanoTime();
		String policy = policy(gateway, route, client);
		while (!expected.equals(policy) && System.nanoTime() - started < Duration.ofSeconds(1).toNanos()) {
			GatewayJar.sleep(20);
			policy = policy(gateway, route, client);
		}
		assertThat(policy).as("applied by " + gateway + " within 1 s").isEqualTo(expected);
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
		assertThat(top.path("clients").get(0).path("client").asString()).isEqualTo(hashed(client));
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
			assertThat(read.path("client").asString()).isEqualTo(hashed(client));
			assertThat(send(this.b, "DELETE", clientPath("ops-read", client)).statusCode()).as(client).isEqualTo(200);
			assertThat(standing(this.a, "ops-read", client)).as(client).containsExactly(5L);
		}
		// slashes may be written as they are, as long as none leads, ends or doubles
		String client = "path/like/key-" + this.run;
		proxied(this.a, "ops-read", client);
		HttpResponse<String> raw = send(this.a, "GET", "/actuator/ratelimits/ops-read/" + client);
		assertThat(json(raw).path("client").asString()).isEqualTo(hashed(client));
		assertThat(json(raw).path("limits").get(0).path("remaining").asLong()).isEqualTo(4);
		// a key no request can carry in a header (non-ASCII, as a principal's name may be) reads and resets
		String unicode = "ünïcødé 🚦-" + this.run;
		assertThat(json(send(this.a, "GET", clientPath("ops-read", unicode))).path("client").asString())
			.isEqualTo(hashed(unicode));
		assertThat(standing(this.a, "ops-read", unicode)).containsExactly(5L);
		assertThat(send(this.a, "DELETE", clientPath("ops-read", unicode)).statusCode()).isEqualTo(200);
	}

	@Test
	void anUnknownRouteIsNotFoundWithAMessage() throws Exception {
		for (HttpResponse<String> response : List.of(send(this.a, "GET", "/actuator/ratelimits/nope"),
				send(this.a, "GET", "/actuator/ratelimits/nope/someone"),
				send(this.a, "DELETE", "/actuator/ratelimits/nope/someone"))) {
			assertThat(response.statusCode()).as(response.body()).isEqualTo(404);
			assertThat(json(response).path("error").asString()).contains("No route or scope 'nope'");
			assertThat(response.body()).contains("ops-read");
		}
	}

	/**
	 * The client as the gateway knows it, and the endpoint and logs name it: the routes are keyed by X-API-Key,
	 * a credential, hashed without a secret (none is set) where it enters the limiter.
	 */
	private static String hashed(String client) {
		return new ClientKeyHash(null).of(client);
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

	private HttpResponse<Void> request(GatewayJar gateway, String route, String client) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/" + route + "/x"))
			.header("X-API-Key", client)
			.timeout(Duration.ofSeconds(5))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.discarding());
	}

	/** The RateLimit-Policy of a request proxied through the gateway. */
	private String policy(GatewayJar gateway, String route, String client) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/" + route + "/x"))
			.header("X-API-Key", client)
			.timeout(Duration.ofSeconds(5))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.discarding()).headers().firstValue("RateLimit-Policy")
			.orElse("");
	}

	private HttpResponse<String> send(GatewayJar gateway, String method, String path)
			throws IOException, InterruptedException {
		return send(gateway, method, path, null);
	}

	/** @param json the request body, sent as JSON; null for none */
	private HttpResponse<String> send(GatewayJar gateway, String method, String path, String json)
			throws IOException, InterruptedException {
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

	private void flushRedis() {
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + this.pair.redisPort());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			connection.sync().flushall();
		}
		finally {
			client.shutdown();
		}
	}

}
