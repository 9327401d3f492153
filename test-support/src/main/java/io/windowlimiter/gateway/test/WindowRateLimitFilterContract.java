package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * What a {@code WindowRateLimit} route filter must do, whichever server it runs on, seen only through HTTP: one
 * gateway of the subclass's (WebFlux or Server MVC, in-process), a {@code redis-server} of this contract's own (so
 * the fault case can freeze it), a downstream that counts what reached it and a fake OpenAI/Anthropic upstream.
 * The headers and refusals, each algorithm's limit, several limits all or nothing, costs from the request and
 * their refusal, concurrency slots, settles after the response, LLM token metering and the body budget, and Redis
 * frozen; each case asserts the figures a client sees. Bucket4j's {@code AbstractDistributedBucketTest} is the
 * model: one suite, and a few lines per adapter that start its gateway.
 * <p>
 * Each case has clients (X-API-Key) of its own, so the cases share one gateway and run in any order; windows
 * are an hour or more (no edge falls inside a case) except where a case waits one out.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class WindowRateLimitFilterContract {

	/** Nothing listens on port 1: a route's call fails before any response. */
	private static final String UNREACHABLE = "http://127.0.0.1:1";

	/** The tokens a day of the LLM routes. */
	private static final int TOKENS = 1000;

	/** The body budget of the instance (window-rate-limiter.llm.max-buffered-bytes). */
	private static final int BUDGET = 64 * 1024;

	/**
	 * An answer while Redis is frozen: the default redis-timeout (600 ms) and one watchdog tick (100 ms), and
	 * 300 ms for the HTTP round trip on a busy 2-core machine.
	 */
	private static final long FAULT_BOUND_MILLIS = 1_000;

	/** An answer slower than this waited on the frozen Redis (the others took the fail-mode at once). */
	private static final long WAITED_MILLIS = 200;

	private static final String SMALL_CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":10}";

	/**
	 * The most a Retry-After of a sliding window counter of 1 h may say: a request counted in the previous window
	 * weighs until that window has slid past, up to two windows from its start.
	 */
	private static final long TWO_HOURS = 7200;

	private static final Pattern REMAINING = Pattern.compile("\"remaining\":(-?\\d+)");

	private static final Pattern GAUGE = Pattern.compile("\"value\":(-?[0-9.E]+)");

	private static final Pattern SCRIPT_CALLS = Pattern.compile("cmdstat_(eval|evalsha):calls=(\\d+)");

	private final String run = Long.toString(System.nanoTime(), 36);

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private RedisProcess redis;

	private CountingDownstream downstream;

	private FakeLlmServer llm;

	private int port;

	/** The gateway's properties, for the start-up that must be refused ({@code assertConcurrencyRefusedAtStartUp}). */
	private Map<String, String> properties;

	/** What refused that start-up, once asked. */
	private String concurrencyRefusal;

	/**
	 * Starts this server's gateway, in-process, with these properties (Redis, the routes, the global settings) and
	 * the key resolver bean {@code headerKeyResolver} (X-API-Key); returns the port it listens on.
	 */
	protected abstract int startGateway(Map<String, String> properties);

	/** Stops what {@link #startGateway} started. */
	protected abstract void stopGateway();

	/**
	 * Where this server's routes are set: {@code spring.cloud.gateway.server.webflux.routes} or
	 * {@code spring.cloud.gateway.server.webmvc.routes}.
	 */
	protected abstract String routesProperty();

	/**
	 * The {@code key-resolver} argument that names a resolver bean on this server: a SpEL reference on WebFlux
	 * ({@code #{@headerKeyResolver}}), the bean's name on Server MVC.
	 */
	protected abstract String keyResolver(String bean);

	/**
	 * Whether this server's filter gives a concurrency slot back when its response ends, and so takes
	 * {@code algorithm: concurrency}. A server that does not must refuse such a route at start-up, naming it: the
	 * concurrency cases then assert that refusal instead (a route that took slots and never gave them back would
	 * lock its clients out for the window).
	 */
	protected boolean releasesConcurrencySlots() {
		return true;
	}

	@BeforeAll
	final void startAll() {
		this.redis = RedisProcess.launch();
		this.downstream = new CountingDownstream();
		this.llm = FakeLlmServer.start();
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("server.port", "0");
		properties.put("spring.data.redis.host", "127.0.0.1");
		properties.put("spring.data.redis.port", Integer.toString(this.redis.port()));
		properties.put("window-rate-limiter.problem-details.enabled", "true");
		properties.put("window-rate-limiter.llm.max-buffered-bytes", "64KB");
		properties.put("management.endpoints.web.exposure.include", "ratelimits,metrics");
		// issue 45: $10 per million tokens in and out (10 micro-dollars a token), cached and cache reads at $5 and
		// $1, cache writes at $20: whole micro-dollars a token, so a test's figures read as tokens times ten
		properties.put("window-rate-limiter.llm-prices.gpt-fake.input", "10");
		properties.put("window-rate-limiter.llm-prices.gpt-fake.output", "10");
		properties.put("window-rate-limiter.llm-prices.gpt-fake.cached-input", "5");
		properties.put("window-rate-limiter.llm-prices.gpt-fake.cache-read", "1");
		properties.put("window-rate-limiter.llm-prices.gpt-fake.cache-write", "20");
		routes(properties);
		this.properties = properties;
		this.port = startGateway(properties);
	}

	@AfterAll
	final void stopAll() {
		try {
			stopGateway();
		}
		finally {
			this.llm.close();
			this.downstream.close();
			this.redis.close();
		}
	}

	private void routes(Map<String, String> properties) {
		String down = this.downstream.uri();
		String llm = this.llm.baseUrl();
		int[] index = { 0 };
		Route route = (id, uri, args) -> route(properties, index[0]++, id, uri, args);
		route.add("basic", down, "limit=3", "window=1h");
		route.add("retry", down, "algorithm=sliding-log", "limit=2", "window=2s");
		route.add("fixed", down, "algorithm=fixed-window", "limit=3", "window=1h");
		route.add("log", down, "algorithm=sliding-log", "limit=3", "window=1h");
		route.add("counter", down, "algorithm=sliding-window-counter", "limit=3", "window=1h");
		route.add("bucket", down, "algorithm=token-bucket", "limit=3", "window=1h");
		route.add("both", down, "cost-from-header=X-Cost", "limits[0].limit=10", "limits[0].window=1h",
				"limits[0].name=both-ten", "limits[1].limit=4", "limits[1].window=1h", "limits[1].name=both-four");
		route.add("costly", down, "limit=5", "window=1h", "cost-from-header=X-Cost");
		route.add("flat", down, "limit=5", "window=1h", "cost=2");
		route.add("login", down, "limit=2", "window=1h", "count-statuses=401");
		route.add("metered", down, "algorithm=fixed-window", "limit=10", "window=1h", "cost=4",
				"cost-from-response-header=X-Actual-Cost");
		route.add("unreachable", UNREACHABLE, "limit=1", "window=1h", "count-statuses=401,403");
		route.add("unreachable-counted", UNREACHABLE, "limit=1", "window=1h", "count-statuses=5xx");
		route.add("coded", down, "limit=1", "window=1h", "status-code=503", "empty-key-status=401");
		route.add("keyless", down, "limit=2", "window=1h", "deny-empty-key=false");
		route.add("monthly", down, "limit=1", "calendar=month", "time-zone=Pacific/Kiritimati", "quota-status=403",
				"name=monthly");
		route.add("penalty", down, "limit=1", "window=1s", "block-for=10m", "deny=banned-key", "allow=vip-key");
		route.add("open", down, "limit=10", "window=1h");
		route.add("closed", down, "limit=10", "window=1h", "fail-mode=closed");
		for (String[] api : new String[][] { { "openai", "openai" }, { "claude", "anthropic" } }) {
			route.add(api[0], llm, "llm=" + api[1], "max-body-bytes=8192", "limits[0].algorithm=fixed-window",
					"limits[0].limit=" + TOKENS, "limits[0].window=1d", "limits[0].unit=tokens",
					"limits[1].algorithm=fixed-window", "limits[1].limit=100", "limits[1].window=1d");
		}
		// issue 45: tokens of every model, and of gpt-fake* (the model FakeLlmServer.chat() names) apart
		route.add("per-model", llm, "llm=openai", "limits[0].algorithm=fixed-window", "limits[0].limit=" + TOKENS,
				"limits[0].window=1d", "limits[0].unit=tokens", "limits[1].algorithm=fixed-window", "limits[1].limit=300",
				"limits[1].window=1d", "limits[1].unit=tokens", "limits[1].model=gpt-fake*");
		// issue 45: a budget in money, $0.015 a day on OpenAI, $0.05 on Anthropic
		for (String[] spend : new String[][] { { "spend", "openai", "0.015" }, { "spend-claude", "anthropic", "0.05" } }) {
			route.add(spend[0], llm, "llm=" + spend[1], "limits[0].algorithm=fixed-window", "limits[0].limit=100000",
					"limits[0].window=1d", "limits[0].unit=tokens", "limits[1].algorithm=fixed-window",
					"limits[1].limit=" + spend[2], "limits[1].window=1d", "limits[1].unit=usd");
		}
		for (String[] calls : new String[][] { { "chat", "1000000" }, { "chat-one", "1" } }) {
			route.add(calls[0], llm, "llm=openai", "max-body-bytes=40000", "limits[0].limit=100000000",
					"limits[0].window=1d", "limits[0].unit=tokens", "limits[1].limit=" + calls[1], "limits[1].window=1d");
		}
		if (releasesConcurrencySlots()) {
			concurrencyRoutes(route, down);
			route.add("chat-slots", llm, "llm=openai", "limits[0].limit=3000", "limits[0].window=1h",
					"limits[0].unit=tokens", "limits[1].algorithm=concurrency", "limits[1].limit=2", "limits[1].window=30s");
		}
	}

	private static void concurrencyRoutes(Route route, String down) {
		route.add("slots", down, "algorithm=concurrency", "limit=2", "window=30s");
		route.add("slot-error", down, "algorithm=concurrency", "limit=1", "window=30s");
		route.add("slot-unreachable", UNREACHABLE, "algorithm=concurrency", "limit=1", "window=30s");
	}

	@FunctionalInterface
	private interface Route {

		void add(String id, String uri, String... args);

	}

	/** Route {@code index}: {@code /<id>/**} to {@code uri}, one WindowRateLimit filter keyed by X-API-Key. */
	private void route(Map<String, String> properties, int index, String id, String uri, String... args) {
		String route = routesProperty() + "[" + index + "].";
		properties.put(route + "id", id);
		properties.put(route + "uri", uri);
		properties.put(route + "predicates[0]", "Path=/" + id + "/**");
		properties.put(route + "filters[0].name", "WindowRateLimit");
		properties.put(route + "filters[0].args.key-resolver", keyResolver("headerKeyResolver"));
		for (String arg : args) {
			String[] nameValue = arg.split("=", 2);
			properties.put(route + "filters[0].args." + nameValue[0], nameValue[1]);
		}
	}

	// ---------------------------------------------------------------- headers and refusals

	@Test
	void allowedAnswersCarryTheRateLimitHeadersAndARefusalIsA429WithProblemDetailsThatNeverReachesTheDownstream()
			throws Exception {
		String key = key("basic");
		for (int i = 1; i <= 3; i++) {
			HttpResponse<String> allowed = get("/basic/x", key);
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(allowed.body()).isEqualTo("downstream");
			assertThat(header(allowed, "X-RateLimit-Limit")).isEqualTo("3");
			assertThat(header(allowed, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
			long reset = Long.parseLong(header(allowed, "X-RateLimit-Reset"));
			assertThat(reset).as("X-RateLimit-Reset, seconds").isBetween(1L, 3600L);
			assertThat(header(allowed, "RateLimit-Policy")).isEqualTo("\"basic\";q=3;w=3600");
			assertThat(header(allowed, "RateLimit")).isEqualTo("\"basic\";r=" + (3 - i) + ";t=" + reset);
			assertThat(allowed.headers().firstValue("Retry-After")).isEmpty();
		}
		HttpResponse<String> refused = get("/basic/x", key);
		assertThat(refused.statusCode()).isEqualTo(429);
		long retryAfter = retryAfter(refused);
		assertThat(retryAfter).isBetween(1L, TWO_HOURS);
		assertThat(header(refused, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(refused, "RateLimit")).isEqualTo("\"basic\";r=0;t=" + retryAfter);
		assertThat(header(refused, "Content-Type")).startsWith("application/problem+json");
		assertThat(refused.body()).contains("quota-exceeded", "\"status\":429", "\"violated-policies\":[\"basic\"]");
		assertThat(refused.headers().firstValue("X-Window-Rate-Limiter-Violated")).as("the internal mark, removed")
			.isEmpty();
		assertThat(this.downstream.hits("/basic/x", key)).as("requests that reached the downstream").isEqualTo(3);
		assertThat(get("/basic/x", key + "-other").statusCode()).as("another client").isEqualTo(200);
	}

	/** A client that waits what Retry-After says is let in: no sooner is promised than is true. */
	@Test
	void aClientThatWaitsTheRetryAfterIsLetIn() throws Exception {
		String key = key("retry");
		assertThat(get("/retry/x", key).statusCode()).isEqualTo(200);
		assertThat(get("/retry/x", key).statusCode()).isEqualTo(200);
		HttpResponse<String> refused = get("/retry/x", key);
		assertThat(refused.statusCode()).isEqualTo(429);
		long retryAfter = retryAfter(refused);
		assertThat(retryAfter).as("of a 2 s sliding log").isBetween(1L, 2L);
		Thread.sleep(retryAfter * 1000 + 50);
		assertThat(get("/retry/x", key).statusCode()).as("after Retry-After").isEqualTo(200);
		assertThat(this.downstream.hits("/retry/x", key)).isEqualTo(3);
	}

	@Test
	void aRouteStatusCodeAnswersItsRefusalsAndAKeylessRequestItsEmptyKeyStatus() throws Exception {
		String key = key("coded");
		assertThat(get("/coded/x", key).statusCode()).isEqualTo(200);
		HttpResponse<String> refused = get("/coded/x", key);
		assertThat(refused.statusCode()).as("status-code").isEqualTo(503);
		assertThat(retryAfter(refused)).isBetween(1L, TWO_HOURS);
		assertThat(refused.body()).contains("\"status\":503", "\"violated-policies\":[\"coded\"]");
		HttpResponse<String> keyless = get("/coded/nokey", null);
		assertThat(keyless.statusCode()).as("empty-key-status").isEqualTo(401);
		assertThat(keyless.body()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401,"
				+ "\"detail\":\"This route counts requests per client by the X-API-Key header, and the request has none; "
				+ "send it\"}");
		assertThat(this.downstream.hits("/coded/x", key)).isEqualTo(1);
		assertThat(this.downstream.hits("/coded/nokey", null)).isZero();
	}

	/**
	 * A request without the key header is refused (403 by default) with a problem-details body naming what was
	 * missing, the README's sample (it was a bare status: the client could not tell why), or with
	 * {@code deny-empty-key: false} counted with every keyless request of the route.
	 */
	@Test
	void aKeylessRequestIsRefusedWith403OrCountedWithTheOtherKeylessOnes() throws Exception {
		HttpResponse<String> missing = get("/basic/nokey", null);
		assertThat(missing.statusCode()).isEqualTo(403);
		assertThat(header(missing, "Content-Type")).isEqualTo("application/problem+json");
		DocsSamples.Answer sample = DocsSamples.answer("README.md", "missing-key");
		DocsSamples.assertSameShape("README.md:" + sample.line(), sample.json(), missing.body(), sample.varying());
		assertThat(this.downstream.hits("/basic/nokey", null)).isZero();
		String path = "/keyless/" + this.run;
		for (int i = 1; i <= 2; i++) {
			HttpResponse<String> allowed = get(path, null);
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(header(allowed, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(2 - i));
		}
		HttpResponse<String> refused = get(path, null);
		assertThat(refused.statusCode()).as("the third keyless request").isEqualTo(429);
		assertThat(header(refused, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(retryAfter(refused)).isBetween(1L, TWO_HOURS);
		assertThat(this.downstream.hits(path, null)).isEqualTo(2);
		assertThat(redis("KEYS", "wrl:{____EMPTY_KEY__}:keyless:*")).as("the one shared key, the same on both servers")
			.contains("wrl:{____EMPTY_KEY__}:keyless:");
	}

	/** What the core decides reaches the client as decided: a calendar quota, a penalty, deny and allow lists. */
	@Test
	void aCalendarQuotaAPenaltyAndTheListsAnswerAsTheyAreSet() throws Exception {
		String key = key("monthly");
		assertThat(get("/monthly/x", key).statusCode()).isEqualTo(200);
		HttpResponse<String> quota = get("/monthly/x", key);
		assertThat(quota.statusCode()).as("the quota-status").isEqualTo(403);
		assertThat(quota.body()).contains("\"status\":403", "\"violated-policies\":[\"monthly\"]");
		ZonedDateTime now = ZonedDateTime.now(ZoneId.of("Pacific/Kiritimati"));
		long untilNextMonth = Duration
			.between(now, now.toLocalDate().withDayOfMonth(1).plusMonths(1).atStartOfDay(now.getZone()))
			.toSeconds();
		assertThat(retryAfter(quota)).as("to the month's end in its zone").isCloseTo(untilNextMonth, within(5L));
		assertThat(this.downstream.hits("/monthly/x", key)).isEqualTo(1);

		String penalised = key("penalty");
		assertThat(get("/penalty/x", penalised).statusCode()).isEqualTo(200);
		HttpResponse<String> blocked = get("/penalty/x", penalised);
		assertThat(blocked.statusCode()).isEqualTo(429);
		assertThat(retryAfter(blocked)).as("the penalty's 10 minutes").isBetween(590L, 600L);
		Thread.sleep(1_100);
		assertThat(get("/penalty/x", penalised).statusCode()).as("blocked past the 1 s window").isEqualTo(429);
		HttpResponse<String> denied = get("/penalty/x", "banned-key");
		assertThat(denied.statusCode()).isEqualTo(403);
		assertThat(denied.headers().firstValue("Retry-After")).as("no wait ends a deny list's refusal").isEmpty();
		assertThat(denied.body()).contains("\"status\":403").doesNotContain("violated-policies");
		int vipBefore = this.downstream.hits("/penalty/x", "vip-key");
		for (int i = 0; i < 3; i++) {
			assertThat(get("/penalty/x", "vip-key").statusCode()).as("allowed: never limited").isEqualTo(200);
		}
		assertThat(this.downstream.hits("/penalty/x", "banned-key")).isZero();
		assertThat(this.downstream.hits("/penalty/x", "vip-key") - vipBefore).isEqualTo(3);
		assertThat(this.downstream.hits("/penalty/x", penalised)).isEqualTo(1);
	}

	// ---------------------------------------------------------------- algorithms and several limits

	@Test
	void eachAlgorithmHoldsItsLimit() throws Exception {
		for (String route : List.of("fixed", "log", "counter", "bucket")) {
			String key = key(route);
			List<String> seen = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				HttpResponse<String> answer = get("/" + route + "/x", key);
				seen.add(answer.statusCode() + " " + header(answer, "X-RateLimit-Remaining"));
			}
			assertThat(seen).as(route).containsExactly("200 2", "200 1", "200 0", "429 0", "429 0");
			assertThat(this.downstream.hits("/" + route + "/x", key)).as(route).isEqualTo(3);
		}
	}

	/**
	 * Several limits on one route are all or nothing: a request one limit refuses is charged to none, and the
	 * answer reports the limit closest to refusing.
	 */
	@Test
	void severalLimitsOnOneRouteAreAllOrNothing() throws Exception {
		String key = key("both");
		HttpResponse<String> three = get("/both/x", key, "X-Cost", "3");
		assertThat(three.statusCode()).isEqualTo(200);
		assertThat(header(three, "X-RateLimit-Remaining")).as("both-four's, the closer").isEqualTo("1");
		assertThat(header(three, "X-RateLimit-Limit")).isEqualTo("4");
		HttpResponse<String> two = get("/both/x", key, "X-Cost", "2");
		assertThat(two.statusCode()).isEqualTo(429);
		assertThat(two.body()).contains("\"violated-policies\":[\"both-four\"]");
		assertThat(standing("both", key)).as("both-ten then both-four: the refused 2 charged to neither")
			.containsExactly(7L, 1L);
		assertThat(get("/both/x", key, "X-Cost", "1").statusCode()).isEqualTo(200);
		assertThat(standing("both", key)).containsExactly(6L, 0L);
		assertThat(this.downstream.hits("/both/x", key)).isEqualTo(2);
	}

	// ---------------------------------------------------------------- costs

	@Test
	void aRequestIsChargedTheCostItNamesOrTheRoutesCost() throws Exception {
		String key = key("costly");
		assertThat(header(get("/costly/x", key, "X-Cost", "2"), "X-RateLimit-Remaining")).isEqualTo("3");
		assertThat(header(get("/costly/x", key), "X-RateLimit-Remaining")).as("no header: a cost of 1").isEqualTo("2");
		assertThat(header(get("/costly/x", key, "X-Cost", "2"), "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(get("/costly/x", key, "X-Cost", "1").statusCode()).as("5 used").isEqualTo(429);
		assertThat(this.downstream.hits("/costly/x", key)).isEqualTo(3);

		String flat = key("flat");
		assertThat(header(get("/flat/x", flat), "X-RateLimit-Remaining")).as("cost: 2").isEqualTo("3");
		assertThat(header(get("/flat/x", flat), "X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(get("/flat/x", flat).statusCode()).as("2 do not fit in 1").isEqualTo(429);
	}

	@Test
	void aBadCostIsA400NamingTheHeaderAndChargesNothing() throws Exception {
		String key = key("bad-cost");
		for (String bad : List.of("x", "0", "-1", "1.5", "+2", "", "99999999999999999999", "6")) {
			HttpResponse<String> answer = get("/costly/bad", key, "X-Cost", bad);
			assertThat(answer.statusCode()).as("X-Cost: '%s'", bad).isEqualTo(400);
			assertThat(header(answer, "Content-Type")).as("X-Cost: '%s'", bad).startsWith("application/problem+json");
			assertThat(answer.body()).as("X-Cost: '%s'", bad)
				.contains("\"status\":400", "\"header\":\"X-Cost\"", "X-Cost is '" + bad + "'");
		}
		assertThat(get("/costly/bad", key, "X-Cost", "6").body()).contains("more than this route allows at once",
				"a whole number from 1 to 5");
		HttpResponse<String> twice = send(request("/costly/bad", key).header("X-Cost", "1").header("X-Cost", "5"));
		assertThat(twice.statusCode()).as(twice.body()).isEqualTo(400);
		assertThat(twice.body()).contains("X-Cost is sent 2 times");
		assertThat(this.downstream.hits("/costly/bad", key)).isZero();
		assertThat(header(get("/costly/bad", key, "X-Cost", "5"), "X-RateLimit-Remaining"))
			.as("nothing charged for the bad requests").isEqualTo("0");
	}

	// ---------------------------------------------------------------- concurrency

	/**
	 * At most the limit are at the downstream at once; the one beyond is refused at once with Retry-After: 1; a
	 * slot is free again once its response has completed.
	 */
	@Test
	void aConcurrencySlotIsHeldWhileItsResponseRunsAndFreeOnceItCompletes() throws Exception {
		if (!releasesConcurrencySlots()) {
			assertConcurrencyRefusedAtStartUp();
			return;
		}
		String key = key("slots");
		String path = "/slots/" + this.run;
		List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			held.add(sendAsync(request(path + "?delay=1500", key)));
		}
		awaitWithin(Duration.ofSeconds(5), () -> this.downstream.hits(path, key) == 2, "two requests at the downstream");
		HttpResponse<String> third = get(path, key);
		assertThat(third.statusCode()).as("a third while two are held").isEqualTo(429);
		assertThat(header(third, "Retry-After")).isEqualTo("1");
		for (CompletableFuture<HttpResponse<String>> call : held) {
			assertThat(call.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		assertThat(onceSlotFree(path, key).statusCode()).as("once both completed").isEqualTo(200);
		assertThat(this.downstream.mostAtOnce(path)).isEqualTo(2);
		assertThat(this.downstream.hits(path, key)).isEqualTo(3);
	}

	@Test
	void aConcurrencySlotIsFreedWhenTheDownstreamAnswersAnErrorOrCannotBeReached() throws Exception {
		if (!releasesConcurrencySlots()) {
			assertConcurrencyRefusedAtStartUp();
			return;
		}
		String key = key("slot-error");
		assertThat(get("/slot-error/x?status=502", key).statusCode()).isEqualTo(502);
		assertThat(onceSlotFree("/slot-error/x?status=500", key).statusCode()).as("the slot of the 502 freed")
			.isEqualTo(500);
		assertThat(onceSlotFree("/slot-error/x", key).statusCode()).as("the slot of the 500 freed").isEqualTo(200);
		assertThat(get("/slot-unreachable/x", key).statusCode()).isGreaterThanOrEqualTo(500);
		assertThat(onceSlotFree("/slot-unreachable/x", key).statusCode()).as("the failed call's slot freed")
			.isGreaterThanOrEqualTo(500);
	}

	/**
	 * The first answer to {@code path} that is not the slots' refusal, asked again while it is, for at most a
	 * second: a slot is given back just after its response ends (one Redis call nobody waits for), so a client's
	 * next request may race it; one held for its 30 s window would be refused throughout.
	 */
	private HttpResponse<String> onceSlotFree(String path, String key) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
		HttpResponse<String> answer = get(path, key);
		while (answer.statusCode() == 429 && System.nanoTime() < deadline) {
			Thread.sleep(20);
			answer = get(path, key);
		}
		return answer;
	}

	/**
	 * On a server that does not give slots back ({@link #releasesConcurrencySlots()}), a gateway with the concurrency
	 * routes does not start, and says which route and argument; started once for both cases.
	 */
	private void assertConcurrencyRefusedAtStartUp() {
		if (this.concurrencyRefusal == null) {
			Map<String, String> properties = new LinkedHashMap<>(this.properties);
			// the refusal's failure report, logged at ERROR, would read as a failure of a passing build
			properties.put("logging.level.org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter", "off");
			properties.put("logging.level.org.springframework.boot.SpringApplication", "off");
			int[] index = { routeCount(properties) };
			concurrencyRoutes((id, uri, args) -> route(properties, index[0]++, id, uri, args), this.downstream.uri());
			Throwable refused = null;
			try {
				startGateway(properties);
				stopGateway();
			}
			catch (RuntimeException ex) {
				refused = ex;
			}
			assertThat(refused).as("a gateway with algorithm: concurrency routes on a server that keeps no slot")
				.isNotNull();
			Throwable cause = refused;
			while (cause.getCause() != null) {
				cause = cause.getCause();
			}
			this.concurrencyRefusal = cause.getMessage();
		}
		assertThat(this.concurrencyRefusal).contains("route 'slots'", "args.algorithm is 'concurrency'");
	}

	private int routeCount(Map<String, String> properties) {
		int count = 0;
		while (properties.containsKey(routesProperty() + "[" + count + "].id")) {
			count++;
		}
		return count;
	}

	// ---------------------------------------------------------------- settles

	/** Only failed logins count: the 200s are given back once answered, the 401s stay charged. */
	@Test
	void onlyTheCountedStatusesStayCharged() throws Exception {
		String key = key("login");
		for (int i = 1; i <= 4; i++) {
			assertThat(get("/login/x?status=200", key).statusCode()).as("success %d: refunded", i).isEqualTo(200);
		}
		for (int i = 1; i <= 2; i++) {
			assertThat(get("/login/x?status=401", key).statusCode()).as("failed login %d: counted", i).isEqualTo(401);
		}
		assertThat(get("/login/x?status=401", key).statusCode()).as("a third failed login").isEqualTo(429);
		assertThat(get("/login/x?status=200", key).statusCode()).as("refused whatever it would answer").isEqualTo(429);
		assertThat(this.downstream.hits("/login/x", key)).isEqualTo(6);
	}

	/**
	 * A request reserves the route's cost (4 of 10) and is settled to what the downstream reports: less gives back,
	 * 0 gives all back, more charges past the limit; no figure or an unreadable one keeps the reservation.
	 */
	@Test
	void theDownstreamsReportedCostSettlesTheReservation() throws Exception {
		String key = key("metered");
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/metered/x?cost=1", key).statusCode()).as("call %d costing 1", i).isEqualTo(200);
		}
		HttpResponse<String> costly = get("/metered/x?cost=20", key);
		assertThat(costly.statusCode()).isEqualTo(200);
		assertThat(header(costly, "X-RateLimit-Remaining")).as("3 used, 4 reserved of 10").isEqualTo("3");
		HttpResponse<String> refused = get("/metered/x?cost=1", key);
		assertThat(refused.statusCode()).as("charged 20: past the limit").isEqualTo(429);
		assertThat(this.downstream.hits("/metered/x", key)).isEqualTo(4);

		String free = key("metered-free");
		assertThat(header(get("/metered/x?cost=0", free), "X-RateLimit-Remaining")).isEqualTo("6");
		assertThat(header(get("/metered/x?cost=1", free), "X-RateLimit-Remaining")).as("the 0 gave its 4 back")
			.isEqualTo("6");

		String unmetered = key("unmetered");
		assertThat(get("/metered/y", unmetered).statusCode()).isEqualTo(200);
		assertThat(get("/metered/y?cost=abc", unmetered).statusCode()).isEqualTo(200);
		assertThat(get("/metered/y?cost=1", unmetered).statusCode()).as("8 of 10 charged: 4 more do not fit")
			.isEqualTo(429);
	}

	/** A call that fails before any response is settled by the 5xx its client is answered. */
	@Test
	void aFailedCallIsSettledByTheErrorStatusItsClientIsAnswered() throws Exception {
		String key = key("unreachable");
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/unreachable/x", key).statusCode()).as("failure %d: only 401 and 403 count", i)
				.isGreaterThanOrEqualTo(500);
		}
		assertThat(get("/unreachable-counted/x", key).statusCode()).isGreaterThanOrEqualTo(500);
		assertThat(get("/unreachable-counted/x", key).statusCode()).as("the 5xx counted").isEqualTo(429);
	}

	// ---------------------------------------------------------------- LLM metering

	@Test
	void anOpenAiCallReservesItsEstimateAndSettlesToTheReportedUsageStreamingOrNot() throws Exception {
		String key = key("openai");
		HttpResponse<String> json = send(post("/openai/v1/chat/completions", key, FakeLlmServer.chat(300, false))
			.header(FakeLlmServer.HEADER_USAGE, "120,30"));
		assertThat(json.statusCode()).as(json.body()).isEqualTo(200);
		assertThat(header(json, "X-RateLimit-Remaining-Tokens")).as("1,000 less the 300 reserved").isEqualTo("700");
		assertThat(json.body()).contains("\"prompt_tokens\":120");
		assertThat(this.llm.lastReceived().bodyText()).as("the body sent on as the client sent it")
			.isEqualTo(FakeLlmServer.chat(300, false));
		assertThat(this.llm.lastReceived().header("Accept-Encoding")).as("an answer whose usage can be read")
			.isEqualTo("identity");
		awaitTokensLeft("openai", key, TOKENS - 150);
		HttpResponse<String> stream = send(post("/openai/v1/chat/completions", key, FakeLlmServer.chat(300, true))
			.header(FakeLlmServer.HEADER_USAGE, "25,75"));
		assertThat(stream.statusCode()).isEqualTo(200);
		assertThat(header(stream, "X-RateLimit-Remaining-Tokens")).as("850 less the 300 reserved").isEqualTo("550");
		assertThat(stream.body()).contains("data: [DONE]").doesNotContain("prompt_tokens");
		assertThat(this.llm.lastReceived().asksIncludeUsage()).as("include_usage asked upstream").isTrue();
		awaitTokensLeft("openai", key, TOKENS - 250);
		HttpResponse<String> failed = send(post("/openai/v1/chat/completions", key, FakeLlmServer.chat(300, true))
			.header(FakeLlmServer.HEADER_STATUS, "500"));
		assertThat(failed.statusCode()).isEqualTo(500);
		awaitTokensLeft("openai", key, TOKENS - 250);
	}

	@Test
	void anAnthropicCallReservesItsEstimateAndSettlesToTheReportedUsageStreamingOrNot() throws Exception {
		String key = key("claude");
		String body = "{\"model\":\"claude-fake\",\"max_tokens\":200,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
		HttpResponse<String> json = send(post("/claude/v1/messages", key, body).header(FakeLlmServer.HEADER_USAGE, "40,60"));
		assertThat(json.statusCode()).as(json.body()).isEqualTo(200);
		long estimate = (body.length() + 1) / 2 + 200;
		assertThat(header(json, "X-RateLimit-Remaining-Tokens")).isEqualTo(Long.toString(TOKENS - estimate));
		awaitTokensLeft("claude", key, TOKENS - 100);
		String streamed = body.replace("{\"model\"", "{\"stream\":true,\"model\"");
		HttpResponse<String> stream = send(post("/claude/v1/messages", key, streamed)
			.header(FakeLlmServer.HEADER_USAGE, "15,35"));
		assertThat(stream.statusCode()).isEqualTo(200);
		assertThat(stream.body()).contains("message_delta");
		awaitTokensLeft("claude", key, TOKENS - 150);
	}

	/**
	 * Limits per model (issue 45): the model the body names picks the limits that count the call, on either
	 * server; a call of another model leaves the model's limit as it is and is not refused by it.
	 */
	@Test
	void aModelLimitCountsOnlyTheCallsNamingItsModel() throws Exception {
		String key = key("per-model");
		HttpResponse<String> first = send(post("/per-model/v1/chat/completions", key, FakeLlmServer.chat(300, false))
			.header(FakeLlmServer.HEADER_USAGE, "200,100"));
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(header(first, "RateLimit-Policy")).contains("\"per-model-1\";q=300");
		awaitTokensLeft("per-model", key, TOKENS - 300);
		assertThat(standing("per-model", key)).as("every model's, gpt-fake*'s").containsExactly(TOKENS - 300L, 0L);
		HttpResponse<String> refused = send(post("/per-model/v1/chat/completions", key, FakeLlmServer.chat(300, false)));
		assertThat(refused.statusCode()).as("gpt-fake*'s 300 used").isEqualTo(429);
		String other = FakeLlmServer.chat(300, false).replace("gpt-fake", "o3");
		HttpResponse<String> otherModel = send(post("/per-model/v1/chat/completions", key, other)
			.header(FakeLlmServer.HEADER_USAGE, "60,40"));
		assertThat(otherModel.statusCode()).as(otherModel.body()).isEqualTo(200);
		assertThat(header(otherModel, "RateLimit-Policy")).as("not counted by gpt-fake*'s limit")
			.doesNotContain("per-model-1");
		awaitTokensLeft("per-model", key, TOKENS - 400);
		assertThat(standing("per-model", key)).containsExactly(TOKENS - 400L, 0L);
	}

	/**
	 * Budgets in money (issue 45), on either server: a call reserves its estimate's price and is settled to the
	 * price of the usage reported, OpenAI's cached prompt tokens at the cached-input price; a call the budget
	 * cannot hold is refused as OpenAI refuses a spent budget (insufficient_quota), in dollars; one that fits
	 * exactly passes; a model without a price is refused 400 naming it, and never reaches the upstream.
	 */
	@Test
	void aBudgetInMoneyCountsThePriceOfEachCallExactly() throws Exception {
		String key = key("spend");
		HttpResponse<String> first = send(post("/spend/v1/chat/completions", key, FakeLlmServer.chat(1000, false))
			.header(FakeLlmServer.HEADER_USAGE, "1000,0,600"));
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(header(first, "X-RateLimit-Limit-Usd")).isEqualTo("0.015");
		assertThat(header(first, "X-RateLimit-Remaining-Usd")).as("1,000 tokens at $10 a million reserved")
			.isEqualTo("0.005");
		// 400 prompt tokens at $10 and 600 cached at $5 a million: $0.007
		awaitMoneyLeft("spend", key, 8_000);
		HttpResponse<String> refused = send(post("/spend/v1/chat/completions", key, FakeLlmServer.chat(1000, false)));
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.body()).startsWith("{\"error\":{\"message\":\"Budget reached (limit 'spend-1': $0.015 per 1d): "
				+ "Remaining $0.008, Requested $0.01. Please try again in ")
			.endsWith("\",\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}");
		HttpResponse<String> exact = send(post("/spend/v1/chat/completions", key, FakeLlmServer.chat(800, false))
			.header(FakeLlmServer.HEADER_USAGE, "0,0"));
		assertThat(exact.statusCode()).as("$0.008 fits what is left exactly").isEqualTo(200);
		assertThat(header(exact, "X-RateLimit-Remaining-Usd")).isEqualTo("0");
		awaitMoneyLeft("spend", key, 8_000);
		int received = this.llm.received().size();
		HttpResponse<String> unpriced = send(post("/spend/v1/chat/completions", key,
				FakeLlmServer.chat(300, false).replace("gpt-fake", "o3")));
		assertThat(unpriced.statusCode()).isEqualTo(400);
		assertThat(unpriced.body()).contains("\"type\":\"invalid_request_error\"").contains("'o3'")
			.contains("\"param\":\"model\"");
		assertThat(this.llm.received()).as("never sent upstream").hasSize(received);
	}

	/** Anthropic's cache reads and writes, each at its price: the call is charged more than it reserved. */
	@Test
	void aBudgetInMoneyPricesAnthropicsCacheReadsAndWrites() throws Exception {
		String key = key("spend-claude");
		HttpResponse<String> call = send(post("/spend-claude/v1/messages", key, FakeLlmServer.chat(1000, false))
			.header(FakeLlmServer.HEADER_USAGE, "100,200,1000,400"));
		assertThat(call.statusCode()).as(call.body()).isEqualTo(200);
		assertThat(header(call, "X-RateLimit-Remaining-Usd")).isEqualTo("0.04");
		// 100 x 10 + 200 x 10 + 1,000 cache reads x 1 + 400 cache writes x 20 = 12,000 micro-dollars
		awaitMoneyLeft("spend-claude", key, 50_000 - 12_000);
	}

	/** The client's money left (its second limit, micro-dollars) settles to {@code expected}, as {@link #awaitTokensLeft}. */
	private void awaitMoneyLeft(String route, String key, long expected) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		long left = moneyLeft(route, key);
		while (left != expected && System.nanoTime() < deadline) {
			Thread.sleep(20);
			left = moneyLeft(route, key);
		}
		assertThat(left).as("micro-dollars left of %s", route).isEqualTo(expected);
	}

	/**
	 * What the client's money limit (its second) has left, in micro-dollars, from the client view, which shows it
	 * in dollars as an override writes them.
	 */
	private long moneyLeft(String route, String key) throws Exception {
		HttpResponse<String> read = send(request("/actuator/ratelimits/" + route + "/" + key, null));
		Matcher money = Pattern.compile("\"remaining\":([0-9.]+),[^}]*\"unit\":\"usd\"").matcher(read.body());
		assertThat(money.find()).as(read.body()).isTrue();
		return new java.math.BigDecimal(money.group(1)).movePointRight(6).longValueExact();
	}

	// ---------------------------------------------------------------- LLM routes in the providers' own terms

	/**
	 * An OpenAI route answers as OpenAI does, so that its SDKs read it (before: a refusal's empty body raised
	 * "429 status code (no body)"): its request and token limits in {@code x-ratelimit-*-requests|tokens}, resets as Go
	 * durations; a refusal as OpenAI's error object ({@code type} tokens or requests, {@code code}
	 * rate_limit_exceeded) whose message names the limit, what it had left, what the call asked and when to retry,
	 * with {@code x-should-retry: false} when that is more than a minute away; the route's other errors (400, 413,
	 * 415, a missing key) as OpenAI's invalid_request_error.
	 */
	@Test
	void anOpenAiRouteAnswersWithOpenAisHeadersAndErrorObjects() throws Exception {
		String key = key("oa-shape");
		HttpResponse<String> first = send(post("/openai/v1/chat/completions", key, FakeLlmServer.chat(300, false))
			.header(FakeLlmServer.HEADER_USAGE, "850,50"));
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(header(first, "x-ratelimit-limit-requests")).isEqualTo("100");
		assertThat(header(first, "x-ratelimit-remaining-requests")).isEqualTo("99");
		assertThat(header(first, "x-ratelimit-limit-tokens")).isEqualTo("1000");
		assertThat(header(first, "x-ratelimit-remaining-tokens")).as("1,000 less the 300 reserved").isEqualTo("700");
		long midnight = millisToUtcMidnight();
		assertThat(goMillis(header(first, "x-ratelimit-reset-tokens"))).as("a fixed window of a day ends at midnight UTC")
			.isCloseTo(midnight, within(5_000L));
		assertThat(goMillis(header(first, "x-ratelimit-reset-requests"))).isCloseTo(midnight, within(5_000L));
		awaitTokensLeft("openai", key, TOKENS - 900);
		HttpResponse<String> refused = send(post("/openai/v1/chat/completions", key, FakeLlmServer.chat(300, false)));
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(header(refused, "Content-Type")).startsWith("application/json");
		assertThat(header(refused, "x-ratelimit-remaining-tokens")).isEqualTo("100");
		assertThat(header(refused, "x-ratelimit-remaining-requests")).as("nothing counted of a refused call").isEqualTo("99");
		assertThat(header(refused, "X-RateLimit-Limit")).as("the generic headers: the limit that refused").isEqualTo("1000");
		assertThat(header(refused, "X-RateLimit-Remaining")).isEqualTo("100");
		assertThat(retryAfter(refused)).isCloseTo(midnight / 1000, within(5L));
		assertThat(header(refused, "x-should-retry")).as("not before midnight: the SDK raises at once").isEqualTo("false");
		String wait = header(refused, "x-ratelimit-reset-tokens");
		assertThat(refused.body()).isEqualTo("{\"error\":{\"message\":\"Rate limit reached on tokens (limit 'openai-0': "
				+ "1000 tokens per 1d): Remaining 100, Requested 300. Please try again in " + waitIn(refused.body(), wait)
				+ ".\",\"type\":\"tokens\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}");
		DocsSamples.Answer sample = DocsSamples.answer("docs/llm-routes.md", "openai-refusal");
		DocsSamples.assertSameShape("docs/llm-routes.md:" + sample.line(), sample.json(), refused.body(), sample.varying());
		String one = key("oa-shape-one");
		assertThat(send(post("/chat-one/v1/chat/completions", one, SMALL_CHAT)).statusCode()).isEqualTo(200);
		HttpResponse<String> requests = send(post("/chat-one/v1/chat/completions", one, SMALL_CHAT));
		assertThat(requests.statusCode()).isEqualTo(429);
		assertThat(requests.body()).startsWith("{\"error\":{\"message\":\"Rate limit reached on requests (limit "
				+ "'chat-one-1': 1 requests per 1d): Remaining 0, Requested 1. Please try again in ")
			.endsWith(".\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}");
		assertThat(header(requests, "x-ratelimit-limit-requests")).isEqualTo("1");
		assertThat(header(requests, "x-ratelimit-remaining-requests")).isEqualTo("0");
		assertThat(header(requests, "x-ratelimit-limit-tokens")).isEqualTo("100000000");
		assertProviderErrors("/openai/v1/chat/completions", key("oa-errors"), "{\"error\":{\"message\":%s,\"type\":\"%s\","
				+ "\"param\":%s,\"code\":null}}", "invalid_request_error", "invalid_request_error", "invalid_request_error");
	}

	/**
	 * An Anthropic route answers as Anthropic does: {@code anthropic-ratelimit-requests|tokens-limit|remaining|reset}
	 * (resets in RFC 3339, UTC) beside {@code X-RateLimit-Remaining-Tokens}; a refusal as
	 * {@code {"type":"error","error":{"type":"rate_limit_error","message":...}}}; the route's other errors typed as
	 * Anthropic types them (request_too_large, permission_error, invalid_request_error).
	 */
	@Test
	void anAnthropicRouteAnswersWithAnthropicsHeadersAndErrorObjects() throws Exception {
		String key = key("an-shape");
		String body = "{\"model\":\"claude-fake\",\"max_tokens\":200,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
		long estimate = (body.length() + 1) / 2 + 200;
		HttpResponse<String> first = send(post("/claude/v1/messages", key, body).header(FakeLlmServer.HEADER_USAGE, "850,50"));
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		String midnight = Instant.ofEpochMilli(System.currentTimeMillis() + millisToUtcMidnight() + 500)
			.truncatedTo(ChronoUnit.DAYS)
			.toString();
		assertThat(header(first, "anthropic-ratelimit-requests-limit")).isEqualTo("100");
		assertThat(header(first, "anthropic-ratelimit-requests-remaining")).isEqualTo("99");
		assertThat(header(first, "anthropic-ratelimit-requests-reset")).isEqualTo(midnight);
		assertThat(header(first, "anthropic-ratelimit-tokens-limit")).isEqualTo("1000");
		assertThat(header(first, "anthropic-ratelimit-tokens-remaining")).isEqualTo(Long.toString(TOKENS - estimate));
		assertThat(header(first, "anthropic-ratelimit-tokens-reset")).isEqualTo(midnight);
		assertThat(header(first, "X-RateLimit-Remaining-Tokens")).as("kept").isEqualTo(Long.toString(TOKENS - estimate));
		assertThat(headerOrNull(first, "x-ratelimit-limit-tokens")).as("OpenAI's, not on an Anthropic route").isNull();
		awaitTokensLeft("claude", key, TOKENS - 900);
		HttpResponse<String> refused = send(post("/claude/v1/messages", key, body));
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(header(refused, "anthropic-ratelimit-tokens-remaining")).isEqualTo("100");
		assertThat(header(refused, "x-should-retry")).isEqualTo("false");
		assertThat(retryAfter(refused)).isCloseTo(millisToUtcMidnight() / 1000, within(5L));
		assertThat(refused.body()).startsWith("{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":"
				+ "\"Rate limit reached on tokens (limit 'claude-0': 1000 tokens per 1d): Remaining 100, Requested " + estimate
				+ ". Please try again in ")
			.endsWith("s.\"}}");
		DocsSamples.Answer sample = DocsSamples.answer("docs/llm-routes.md", "anthropic-refusal");
		DocsSamples.assertSameShape("docs/llm-routes.md:" + sample.line(), sample.json(), refused.body(), sample.varying());
		assertProviderErrors("/claude/v1/messages", key("an-errors"), "{\"type\":\"error\",\"error\":{\"type\":\"%2$s\","
				+ "\"message\":%1$s}}", "invalid_request_error", "request_too_large", "permission_error");
	}

	/**
	 * The concurrency limit counts calls in flight, not requests per window: an admitted call's generic headers
	 * tell the token budget (before: {@code X-RateLimit-Limit: 2}, the concurrency limit's, on a budget of 3,000),
	 * and no {@code x-ratelimit-limit-requests} comes of it.
	 */
	@Test
	void aConcurrencyLimitIsNoRequestQuotaInAnLlmCallsHeaders() throws Exception {
		if (!releasesConcurrencySlots()) {
			return;
		}
		HttpResponse<String> call = send(post("/chat-slots/v1/chat/completions", key("cs"), FakeLlmServer.chat(300, false)));
		assertThat(call.statusCode()).as(call.body()).isEqualTo(200);
		assertThat(header(call, "X-RateLimit-Limit")).isEqualTo("3000");
		assertThat(header(call, "X-RateLimit-Remaining")).isEqualTo("2700");
		assertThat(header(call, "x-ratelimit-limit-tokens")).isEqualTo("3000");
		assertThat(header(call, "x-ratelimit-remaining-tokens")).isEqualTo("2700");
		assertThat(headerOrNull(call, "x-ratelimit-limit-requests")).isNull();
		assertThat(headerOrNull(call, "x-ratelimit-remaining-requests")).isNull();
	}

	/**
	 * The route's 400 (a body it will not guess at), 413, 415 and 403 (no key) in the provider's shape.
	 * @param shape the body, of the message (a JSON string), the type and OpenAI's param (a JSON string or null)
	 * @param types the types of the 400 and 415, of the 413, and of the 403
	 */
	private void assertProviderErrors(String path, String key, String shape, String badRequest, String tooLarge,
			String forbidden) throws Exception {
		HttpResponse<String> duplicated = send(post(path, key, "{\"model\":\"m\",\"stream\":true,\"stream\":false,"
				+ "\"messages\":[]}"));
		assertThat(duplicated.statusCode()).isEqualTo(400);
		assertThat(duplicated.body()).isEqualTo(String.format(shape, "\"stream appears more than once in the request body "
				+ "(escaped spellings included): an upstream reads the last one, so the gateway cannot meter the call; send it "
				+ "once\"", badRequest, "\"stream\""));
		HttpResponse<String> large = send(post(path, key, "{\"messages\":\"" + "x".repeat(9000) + "\"}"));
		assertThat(large.statusCode()).isEqualTo(413);
		assertThat(large.body()).isEqualTo(String.format(shape, "\"The request body is larger than this LLM route reads to "
				+ "estimate its tokens: at most 8192 bytes (max-body-bytes)\"", tooLarge, "null"));
		HttpResponse<String> gzip = send(post(path, key, SMALL_CHAT).header("Content-Encoding", "gzip"));
		assertThat(gzip.statusCode()).isEqualTo(415);
		assertThat(gzip.body()).isEqualTo(String.format(shape, "\"The request body is in a content coding (Content-Encoding: "
				+ "gzip), which this LLM route does not read: its tokens are estimated and metered from the JSON as sent; send "
				+ "it uncompressed\"", badRequest, "null"));
		HttpResponse<String> keyless = send(post(path, null, SMALL_CHAT));
		assertThat(keyless.statusCode()).isEqualTo(403);
		assertThat(keyless.body()).isEqualTo(String.format(shape, "\"This route counts requests per client by the X-API-Key "
				+ "header, and the request has none; send it\"", forbidden, "null"));
		for (HttpResponse<String> error : List.of(duplicated, large, gzip, keyless)) {
			assertThat(header(error, "Content-Type")).startsWith("application/json");
		}
	}

	/** The milliseconds until the next midnight, UTC: where a fixed window of a day ends. */
	private static long millisToUtcMidnight() {
		long now = System.currentTimeMillis();
		return 86_400_000L - now % 86_400_000L;
	}

	private static final Pattern GO_DURATION = Pattern.compile("(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+(?:\\.\\d+)?)s)?");

	/** A duration as OpenAI writes its resets ({@code 6m0s}, {@code 59.5s}, {@code 12ms}), in milliseconds. */
	private static long goMillis(String duration) {
		if (duration.endsWith("ms")) {
			return Long.parseLong(duration.substring(0, duration.length() - 2));
		}
		Matcher parts = GO_DURATION.matcher(duration);
		assertThat(parts.matches()).as("a Go duration: %s", duration).isTrue();
		long hours = (parts.group(1) != null) ? Long.parseLong(parts.group(1)) : 0;
		long minutes = (parts.group(2) != null) ? Long.parseLong(parts.group(2)) : 0;
		double seconds = (parts.group(3) != null) ? Double.parseDouble(parts.group(3)) : 0;
		return hours * 3_600_000 + minutes * 60_000 + Math.round(seconds * 1000);
	}

	/** The wait a refusal's message names, checked as a Go duration close to the reset header beside it. */
	private static String waitIn(String body, String reset) {
		Matcher wait = Pattern.compile("try again in ([0-9hms.]+)\\.\"").matcher(body);
		assertThat(wait.find()).as(body).isTrue();
		assertThat(goMillis(wait.group(1))).isCloseTo(goMillis(reset), within(5_000L));
		return wait.group(1);
	}

	// ---------------------------------------------------------------- the body budget of LLM routes

	/**
	 * A body's bytes are taken from {@code window-rate-limiter.llm.max-buffered-bytes} as they are read and all
	 * given back whatever ends the call: admitted, refused by a limit, 413, 400, the upstream failing (read through
	 * the {@code gateway.ratelimit.llm.buffered} gauge). A leak would refuse every LLM call once the budget leaked.
	 */
	@Test
	void everyBufferedBodyGivesItsBytesBackWhateverEndsItsCall() throws Exception {
		assertThat(bufferBudget()).isEqualTo(BUDGET);
		try (ChunkedBody body = ChunkedBody.start(this.port, "/chat/v1/chat/completions", key("bb"))) {
			body.send(20_000);
			awaitWithin(Duration.ofSeconds(5), () -> bufferedBytes() >= 20_000,
					"20,000 bytes counted as they are read");
			assertThat(body.end().answer(Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
		}
		awaitNothingBuffered();
		String one = key("bb-one");
		assertThat(send(post("/chat-one/v1/chat/completions", one, SMALL_CHAT)).statusCode()).isEqualTo(200);
		assertThat(send(post("/chat-one/v1/chat/completions", one, SMALL_CHAT)).statusCode()).isEqualTo(429);
		awaitNothingBuffered();
		try (ChunkedBody body = ChunkedBody.start(this.port, "/chat/v1/chat/completions", key("bb"))) {
			assertThat(body.send(30_000).send(30_000).answer(Duration.ofSeconds(10))).startsWith("HTTP/1.1 413");
		}
		awaitNothingBuffered();
		HttpResponse<String> duplicated = send(post("/chat/v1/chat/completions", key("bb"),
				"{\"model\":\"m\",\"stream\":true,\"stream\":false,\"messages\":[]}"));
		assertThat(duplicated.statusCode()).as(duplicated.body()).isEqualTo(400);
		awaitNothingBuffered();
		HttpResponse<String> failed = send(post("/chat/v1/chat/completions", key("bb"), SMALL_CHAT)
			.header(FakeLlmServer.HEADER_STATUS, "500"));
		assertThat(failed.statusCode()).isEqualTo(500);
		awaitNothingBuffered();
	}

	/** A body past the budget is refused 503 at once, naming it; a client gone mid-body gives its bytes back. */
	@Test
	void aBodyPastTheBudgetIsRefused503AtOnceAndAClientGoneMidBodyGivesItsBytesBack() throws Exception {
		try (ChunkedBody holder = ChunkedBody.start(this.port, "/chat/v1/chat/completions", key("bb"))) {
			holder.send(30_000).send(9_000);
			awaitWithin(Duration.ofSeconds(5), () -> bufferedBytes() >= 39_000,
					"the holder's 39,000 bytes counted");
			try (ChunkedBody second = ChunkedBody.start(this.port, "/chat/v1/chat/completions", key("bb"))) {
				assertThat(second.send(20_000).send(10_000).answer(Duration.ofSeconds(5))).startsWith("HTTP/1.1 503")
					.containsIgnoringCase("retry-after: 1")
					.contains("application/json")
					.contains("{\"error\":{\"message\":\"This gateway instance is reading as many LLM request bodies as it "
							+ "holds at once (at most " + BUDGET + " bytes together, max-buffered-bytes); retry shortly\","
							+ "\"type\":\"server_error\",\"param\":null,\"code\":null}}");
			}
			HttpResponse<String> declared = send(post("/chat/v1/chat/completions", key("bb"),
					"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "b".repeat(30_000) + "\"}]}"));
			assertThat(declared.statusCode()).as("a declared length that does not fit").isEqualTo(503);
			assertThat(header(declared, "Retry-After")).isEqualTo("1");
			awaitWithin(Duration.ofSeconds(5), () -> bufferedBytes() < 40_000,
					"the refused bodies' bytes given back");
			assertThat(bufferedBytes()).as("the holder's own").isBetween(39_000L, 40_000L);
			assertThat(send(post("/chat/v1/chat/completions", key("bb"), SMALL_CHAT)).statusCode())
				.as("a small call beside the holder").isEqualTo(200);
		}
		awaitNothingBuffered();
	}

	// ---------------------------------------------------------------- Redis frozen

	/**
	 * Redis frozen (SIGSTOP): every answer comes within the bound, a fail-open route lets the request through to
	 * the downstream, a fail-closed one refuses it with 429 and Retry-After: 1; once Redis answers again the client
	 * is charged at most the requests that waited on it, Redis ran at most those and the guard's trials, and
	 * limiting resumes.
	 */
	@Test
	void aFrozenRedisGetsEachRoutesFailModeWithinTheBoundAndChargesNoBacklog() throws Exception {
		String key = key("fault");
		for (String route : List.of("open", "closed")) {
			assertThat(header(get("/" + route + "/x", key), "X-RateLimit-Remaining")).isEqualTo("9");
			assertThat(header(get("/" + route + "/x", key), "X-RateLimit-Remaining")).isEqualTo("8");
		}
		long scriptsBefore = scriptCalls();
		int waited = 0;
		this.redis.freeze();
		try {
			for (int i = 0; i < 3; i++) {
				for (String route : List.of("open", "closed")) {
					long started = System.nanoTime();
					HttpResponse<String> answer = get("/" + route + "/x", key);
					long tookMillis = (System.nanoTime() - started) / 1_000_000;
					assertThat(tookMillis).as("%s answered in ms", route).isLessThan(FAULT_BOUND_MILLIS);
					waited += (tookMillis >= WAITED_MILLIS) ? 1 : 0;
					if (route.equals("open")) {
						assertThat(answer.statusCode()).as("fail-mode open").isEqualTo(200);
						assertThat(answer.body()).isEqualTo("downstream");
					}
					else {
						assertThat(answer.statusCode()).as("fail-mode closed").isEqualTo(429);
						assertThat(header(answer, "Retry-After")).isEqualTo("1");
						assertThat(header(answer, "X-RateLimit-Remaining")).isEqualTo("0");
					}
				}
			}
		}
		finally {
			this.redis.thaw();
		}
		assertThat(this.downstream.hits("/open/x", key)).as("2 before, 3 let through").isEqualTo(5);
		assertThat(this.downstream.hits("/closed/x", key)).as("2 before, none while frozen").isEqualTo(2);
		long scriptsRun = scriptCallsOnceQuiet() - scriptsBefore;
		assertThat(scriptsRun).as("scripts Redis ran after the thaw, of %d answers that waited", waited)
			.isLessThanOrEqualTo(waited + 5L);
		int[] tries = { 0 };
		awaitWithin(Duration.ofSeconds(10), () -> {
			tries[0]++;
			return headerOrNull(uncheckedGet("/open/y", key("fault-probe")), "X-RateLimit-Remaining") != null;
		}, "limiting from Redis resumes");
		for (String route : List.of("open", "closed")) {
			HttpResponse<String> after = get("/" + route + "/x", key);
			assertThat(after.statusCode()).as(route).isEqualTo(200);
			long remaining = Long.parseLong(header(after, "X-RateLimit-Remaining"));
			assertThat(remaining).as("%s: 8 left before the freeze, 1 now; charged at most the %d that waited", route,
					waited).isBetween(7L - waited, 7L);
		}
	}

	// ---------------------------------------------------------------- helpers

	private String key(String name) {
		return name + "-" + this.run + "-" + UUID.randomUUID().toString().substring(0, 8);
	}

	private HttpRequest.Builder request(String path, String key) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(15));
		if (key != null) {
			request.header("X-API-Key", key);
		}
		return request;
	}

	private HttpRequest.Builder post(String path, String key, String body) {
		return request(path, key).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
	}

	private HttpResponse<String> get(String path, String key, String... headers) throws IOException, InterruptedException {
		HttpRequest.Builder request = request(path, key);
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return send(request);
	}

	private HttpResponse<String> uncheckedGet(String path, String key) {
		try {
			return get(path, key);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest.Builder request) {
		return this.http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static String header(HttpResponse<?> response, String name) {
		String value = headerOrNull(response, name);
		assertThat(value).as("%s of a %d answer (headers %s)", name, response.statusCode(), response.headers().map())
			.isNotNull();
		return value;
	}

	private static String headerOrNull(HttpResponse<?> response, String name) {
		return response.headers().firstValue(name).orElse(null);
	}

	private static long retryAfter(HttpResponse<?> response) {
		return Long.parseLong(header(response, "Retry-After"));
	}

	/** What the client has left of each limit of the route, in the route's order, from the ratelimits endpoint. */
	private List<Long> standing(String route, String key) throws Exception {
		HttpResponse<String> read = send(request("/actuator/ratelimits/" + route + "/" + key, null));
		assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
		String body = read.body();
		int limits = body.indexOf("\"limits\"");
		assertThat(limits).as(body).isNotNegative();
		Matcher remaining = REMAINING.matcher(body.substring(limits));
		List<Long> left = new ArrayList<>();
		while (remaining.find()) {
			left.add(Long.parseLong(remaining.group(1)));
		}
		return left;
	}

	/**
	 * The client's tokens left settle to {@code expected} (an LLM call's settle may land just after its answer on
	 * WebFlux), and stay there.
	 */
	private void awaitTokensLeft(String route, String key, long expected) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		long left = standing(route, key).get(0);
		while (left != expected && System.nanoTime() < deadline) {
			Thread.sleep(20);
			left = standing(route, key).get(0);
		}
		assertThat(left).as("tokens left of %s", route).isEqualTo(expected);
	}

	/**
	 * The bytes of LLM request bodies the instance holds now: the {@code gateway.ratelimit.llm.buffered} gauge,
	 * read from the {@code metrics} endpoint as an operator reads it. A gateway without Micrometer's registry (no
	 * metrics endpoint) reads its {@code BufferedBodies} instead.
	 */
	protected long bufferedBytes() {
		return gauge("gateway.ratelimit.llm.buffered");
	}

	/** The instance's body budget: the {@code gateway.ratelimit.llm.buffered.max} gauge, as {@link #bufferedBytes()}. */
	protected long bufferBudget() {
		return gauge("gateway.ratelimit.llm.buffered.max");
	}

	private long gauge(String name) {
		HttpResponse<String> read = uncheckedGet("/actuator/metrics/" + name, null);
		assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
		Matcher value = GAUGE.matcher(read.body());
		assertThat(value.find()).as(read.body()).isTrue();
		return (long) Double.parseDouble(value.group(1));
	}

	private void awaitNothingBuffered() {
		awaitWithin(Duration.ofSeconds(5), () -> bufferedBytes() == 0,
				"every buffered byte given back");
	}

	private static void awaitWithin(Duration limit, BooleanSupplier condition, String what) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as(what + " within " + limit).isLessThan(deadline);
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	/** EVAL and EVALSHA calls this contract's Redis has run, from INFO commandstats. */
	private long scriptCalls() {
		Matcher calls = SCRIPT_CALLS.matcher(redis("INFO", "commandstats"));
		long sum = 0;
		while (calls.find()) {
			sum += Long.parseLong(calls.group(2));
		}
		return sum;
	}

	/** The raw reply of one command to this contract's Redis (inline, over a socket of its own). */
	private String redis(String... command) {
		try (Socket socket = new Socket("127.0.0.1", this.redis.port())) {
			socket.setSoTimeout(5_000);
			socket.getOutputStream()
				.write((String.join(" ", command) + "\r\nQUIT\r\n").getBytes(StandardCharsets.US_ASCII));
			return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The script calls once Redis has run none for 300 ms (what waited on it has drained), within 5 s. */
	private long scriptCallsOnceQuiet() throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		long calls = scriptCalls();
		while (System.nanoTime() < deadline) {
			Thread.sleep(300);
			long now = scriptCalls();
			if (now == calls) {
				return now;
			}
			calls = now;
		}
		return calls;
	}

}
