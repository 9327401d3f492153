package io.windowlimiter.gateway.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.test.Downstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import io.windowlimiter.core.plan.Assignment;
import io.windowlimiter.core.plan.PlanAssignments;

/**
 * Plans, scopes, plan resolvers, assignments and overrides through two gateway instances on one Redis,
 * over HTTP to a real downstream. Plan free: 3 per route and 5 in scope {@code api}; plan pro: 6 and
 * 10. Routes {@code orders} and {@code search} default to free; {@code a} and {@code b} have limits of
 * their own in scope {@code ab}. Windows are 366 days, so no edge falls inside a test; each test has
 * client keys of its own. One subclass per Redis topology.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class PlansContract {

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	private static final String YEAR = "366d";

	private static final long W = Duration.ofDays(366).toSeconds();

	private static final String FREE = "\"per-route\";q=3;w=" + W + ", \"daily\";q=5;w=" + W;

	private static final String PRO = "\"per-route\";q=6;w=" + W + ", \"daily\";q=10;w=" + W;

	private static final long D = Duration.ofDays(1).toSeconds();

	private static final String DAY = "\"per-route\";q=4;w=" + D + ", \"daily\";q=6;w=" + D;

	private final Downstream downstream = Downstream.start();

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private final WebClient client = WebClient.create();

	/** The {@code spring.data.redis.*} properties of the Redis both instances share. */
	abstract List<String> redisProperties();

	/**
	 * Stands for an authentication filter the user trusts: it runs before the limiter, drops any plan
	 * header the client sent and sets the plan it vouches for.
	 */
	@Configuration(proxyBeanMethods = false)
	static class TrustedPlanFilter {

		@Bean
		GlobalFilter trustedPlanFilter() {
			return new PlanFilter();
		}

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	static class PlanFilter implements GlobalFilter, Ordered {

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
			String vouched = exchange.getRequest().getHeaders().getFirst("X-Test-Auth");
			return chain.filter(exchange.mutate().request(request -> request.headers(headers -> {
				headers.remove("X-Plan");
				if (vouched != null) {
					headers.set("X-Plan", vouched);
				}
			})).build());
		}

		@Override
		public int getOrder() {
			return -10;
		}

	}

	@BeforeAll
	void startTwoInstances() {
		for (int i = 0; i < 2; i++) {
			this.instances.add(new SpringApplicationBuilder(GatewayTestApplication.class, TrustedPlanFilter.class)
				.properties(properties().toArray(String[]::new))
				.run());
		}
	}

	@AfterAll
	void stop() {
		this.instances.forEach(ConfigurableApplicationContext::close);
		this.downstream.close();
	}

	private List<String> properties() {
		List<String> properties = new ArrayList<>(redisProperties());
		properties.add("server.port=0");
		properties.add("window-rate-limiter.plan-header=X-Plan");
		// TrustedPlanFilter removes what clients send and sets what X-Test-Auth vouches for
		properties.add("window-rate-limiter.plan-header-trusted=true");
		properties.add("window-rate-limiter.problem-details.enabled=true");
		// the operator endpoint, to assign through one instance over HTTP
		properties.add("management.endpoints.web.exposure.include=ratelimits");
		plan(properties, "free", 3, 5, YEAR);
		plan(properties, "pro", 6, 10, YEAR);
		plan(properties, "day", 4, 6, "1d");
		route(properties, 0, "orders", "plan=free");
		route(properties, 1, "search", "plan=free");
		route(properties, 2, "a", "scope=ab", "algorithm=sliding-log", "limit=4", "window=" + YEAR);
		route(properties, 3, "b", "scope=ab", "algorithm=sliding-log", "limit=4", "window=" + YEAR);
		return properties;
	}

	private static void plan(List<String> properties, String plan, int perRoute, int daily, String window) {
		String limits = "window-rate-limiter.plans." + plan + ".limits";
		properties.addAll(List.of(limits + "[0].name=per-route", limits + "[0].algorithm=fixed-window",
				limits + "[0].limit=" + perRoute, limits + "[0].window=" + window, limits + "[1].name=daily",
				limits + "[1].limit=" + daily, limits + "[1].window=" + window, limits + "[1].scope=api"));
	}

	private void route(List<String> properties, int index, String id, String... args) {
		String route = ROUTES + "[" + index + "].";
		properties.add(route + "id=" + id);
		properties.add(route + "uri=" + this.downstream.uri());
		properties.add(route + "predicates[0]=Path=/" + id + "/**");
		properties.add(route + "filters[0].name=RequestRateLimiter");
		properties.add(route + "filters[0].args.rate-limiter=#{@windowRateLimiter}");
		properties.add(route + "filters[0].args.key-resolver=#{@headerKeyResolver}");
		for (String arg : args) {
			properties.add(route + "filters[0].args.window-rate-limiter." + arg);
		}
	}

	record Answer(int status, HttpHeaders headers, String body) {

		String policy() {
			return this.headers.getFirst("RateLimit-Policy");
		}

	}

	private Answer get(int instance, String route, String apiKey, String... headers) {
		int port = ((WebServerApplicationContext) this.instances.get(instance)).getWebServer().getPort();
		return this.client.get().uri("http://127.0.0.1:" + port + "/" + route + "/items").headers(h -> {
			h.set("X-API-Key", apiKey);
			for (int i = 0; i < headers.length; i += 2) {
				h.set(headers[i], headers[i + 1]);
			}
		})
			.exchangeToMono(response -> response.bodyToMono(String.class)
				.defaultIfEmpty("")
				.map(body -> new Answer(response.statusCode().value(), response.headers().asHttpHeaders(), body)))
			.block(Duration.ofSeconds(30));
	}

	/** A call to instance's operator endpoint; {@code json} is the request body, or null for none. */
	private Answer operator(int instance, HttpMethod method, String path, @Nullable String json) {
		int port = ((WebServerApplicationContext) this.instances.get(instance)).getWebServer().getPort();
		WebClient.RequestBodySpec request = this.client.method(method).uri("http://127.0.0.1:" + port + "/actuator/ratelimits/" + path);
		if (json != null) {
			request.contentType(MediaType.APPLICATION_JSON).bodyValue(json);
		}
		return request
			.exchangeToMono(response -> response.bodyToMono(String.class)
				.defaultIfEmpty("")
				.map(body -> new Answer(response.statusCode().value(), response.headers().asHttpHeaders(), body)))
			.block(Duration.ofSeconds(30));
	}

	/** Null, or left out as Boot's endpoint JSON may leave nulls out. */
	private static boolean absent(JsonNode node) {
		return node.isNull() || node.isMissingNode();
	}

	private static JsonNode json(Answer answer) {
		return JsonMapper.shared().readTree(answer.body());
	}

	/** Polls until instance 1 answers the client on the route with this policy; fails past 1 s. */
	private void seenOnTheOtherInstanceWithinASecond(String route, String client, String policy) {
		long started = System.nanoTime();
		while (!policy.equals(get(1, route, client).policy())) {
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("applied by the other instance within 1 s")
				.isLessThan(Duration.ofSeconds(1));
		}
	}

	private PlanAssignments assignments(int instance) {
		return this.instances.get(instance).getBean(PlanAssignments.class);
	}

	private static String key() {
		return UUID.randomUUID().toString();
	}

	/**
	 * The client as PlanAssignments knows it: its X-API-Key is a credential, which the core hashes where it
	 * enters ({@code RateLimiterCore.clientKeyOf}), the same on every instance.
	 */
	private String stored(String target, String client) {
		return this.instances.get(0).getBean(io.windowlimiter.core.RateLimiterCore.class).clientKeyOf(target, client);
	}

	/** How long until instance 1 sees what instance 0 changed; fails past 1 s. */
	private long millisUntilSeenOnTheOtherInstance(String target, String client, boolean present) {
		long started = System.nanoTime();
		while ((assignments(1).find(target, stored(target, client)) != null) != present) {
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("seen on the other instance within 1 s")
				.isLessThan(Duration.ofSeconds(1));
			Thread.onSpinWait();
		}
		long millis = Duration.ofNanos(System.nanoTime() - started).toMillis();
		System.out.println("Assignment change seen on the other instance after " + millis + " ms");
		return millis;
	}

	@Test
	void aScopeCountsAcrossRoutesAndInstancesWhileEachRouteKeepsItsOwnLimit() {
		String client = key();
		for (int i = 0; i < 3; i++) {
			Answer allowed = get(i % 2, "orders", client);
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.policy()).isEqualTo(FREE);
		}
		Answer perRoute = get(1, "orders", client);
		assertThat(perRoute.status()).isEqualTo(429);
		assertThat(perRoute.headers().getFirst("RateLimit")).startsWith("\"per-route\";r=0;");
		assertThat(get(0, "search", client).status()).isEqualTo(200);
		Answer last = get(1, "search", client);
		assertThat(last.status()).isEqualTo(200);
		assertThat(last.headers().getFirst("RateLimit")).startsWith("\"daily\";r=0;");
		// search's own limit has room left; the shared daily scope has none
		Answer scope = get(0, "search", client);
		assertThat(scope.status()).isEqualTo(429);
		assertThat(scope.headers().getFirst("RateLimit")).startsWith("\"daily\";r=0;");
		// the problem names the client's own policy that refused it
		assertThat(scope.body()).contains("\"violated-policies\":[\"daily\"]");
		assertThat(this.downstream.hits("/orders/items", client)).isEqualTo(3);
		assertThat(this.downstream.hits("/search/items", client)).isEqualTo(2);
	}

	@Test
	void routesWithLimitsOfTheirOwnShareTheirScope() {
		String client = key();
		assertThat(List.of(get(0, "a", client), get(1, "b", client), get(0, "a", client), get(1, "b", client)))
			.extracting(Answer::status)
			.containsOnly(200);
		assertThat(get(0, "b", client).status()).isEqualTo(429);
		assertThat(get(1, "a", client).status()).isEqualTo(429);
		assertThat(get(0, "a", client).policy()).isEqualTo("\"ab\";q=4;w=" + W);
	}

	@Test
	void aTrustedFiltersPlanPicksThePlanAndAClientCannotPickItsOwn() {
		String pro = key();
		for (int i = 0; i < 6; i++) {
			Answer allowed = get(i % 2, "orders", pro, "X-Test-Auth", "pro");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.policy()).isEqualTo(PRO);
		}
		assertThat(get(0, "orders", pro, "X-Test-Auth", "pro").status()).isEqualTo(429);

		String claimsPro = key();
		Answer answer = get(0, "orders", claimsPro, "X-Plan", "pro");
		assertThat(answer.policy()).isEqualTo(FREE);
	}

	@Test
	void anUnknownPlanFallsBackToTheRoutesDefaultAndIsCounted() {
		MeterRegistry registry = this.instances.get(1).getBean(MeterRegistry.class);
		double before = unknownPlans(registry);
		Answer answer = get(1, "orders", key(), "X-Test-Auth", "gold");
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.policy()).isEqualTo(FREE);
		assertThat(unknownPlans(registry)).isEqualTo(before + 1);
	}

	private static double unknownPlans(MeterRegistry registry) {
		var counter = registry.find("gateway.ratelimit.plans.unknown").tag("route", "orders").counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void aPlanAssignedOnAScopeReachesEveryInstanceWithinASecondAndEveryRouteNamingIt() {
		String client = key();
		assertThat(get(1, "orders", client).policy()).isEqualTo(FREE);
		assignments(0).assign("api", stored("api", client), "pro", null).block(Duration.ofSeconds(5));
		// the instance that assigned has it at once
		assertThat(assignments(0).find("api", stored("api", client))).isEqualTo(new Assignment("pro", List.of(), 0));
		millisUntilSeenOnTheOtherInstance("api", client, true);
		assertThat(get(1, "orders", client).policy()).isEqualTo(PRO);
		assertThat(get(1, "search", client).policy()).isEqualTo(PRO);
		// an assignment outranks the request's plan
		assertThat(get(1, "search", client, "X-Test-Auth", "free").policy()).isEqualTo(PRO);

		assignments(0).clear("api", stored("api", client)).block(Duration.ofSeconds(5));
		millisUntilSeenOnTheOtherInstance("api", client, false);
		assertThat(get(1, "orders", client).policy()).isEqualTo(FREE);
	}

	@Test
	void anOverrideGivesOneClientLimitsOfItsOwnOnOneRouteUntilItExpires() {
		String client = key();
		assignments(0).override("orders", stored("orders", client),
				List.of(Map.of("name", "tight", "algorithm", "fixed-window", "limit", 1, "window", YEAR)),
				Duration.ofSeconds(2))
			.block(Duration.ofSeconds(5));
		millisUntilSeenOnTheOtherInstance("orders", client, true);
		Answer first = get(1, "orders", client);
		assertThat(first.status()).isEqualTo(200);
		assertThat(first.policy()).isEqualTo("\"tight\";q=1;w=" + W);
		Answer refused = get(0, "orders", client);
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.body()).contains("\"violated-policies\":[\"tight\"]");
		// the override is for orders alone
		assertThat(get(1, "search", client).policy()).isEqualTo(FREE);

		long started = System.nanoTime();
		while (assignments(1).find("orders", stored("orders", client)) != null) {
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
			Thread.onSpinWait();
		}
		Answer expired = get(1, "orders", client);
		assertThat(expired.policy()).isEqualTo(FREE);
		assertThat(expired.status()).isEqualTo(200);
	}

	/**
	 * A plan assigned on scope {@code api} through one instance's endpoint: the other applies it within a
	 * second on every route naming the scope, reads it on the scope, resets the scope's counts, and clears it.
	 */
	@Test
	void theEndpointAssignsAPlanOnAScopeThatEveryInstanceAppliesWithinASecond() {
		String client = key();
		assertThat(get(1, "orders", client).policy()).isEqualTo(FREE);
		Answer assigned = operator(0, HttpMethod.POST, "api/" + client, "{\"plan\": \"pro\"}");
		assertThat(assigned.status()).as(assigned.body()).isEqualTo(200);
		assertThat(json(assigned).path("change").asString()).isEqualTo("assign");
		assertThat(json(assigned).path("assignment").path("plan").asString()).isEqualTo("pro");
		seenOnTheOtherInstanceWithinASecond("orders", client, PRO);
		assertThat(get(1, "search", client).policy()).isEqualTo(PRO);

		// the scope's own counter, read and reset as a target of its own, on either instance
		Answer read = operator(1, HttpMethod.GET, "api/" + client, null);
		assertThat(read.status()).as(read.body()).isEqualTo(200);
		assertThat(json(read).path("assignment").path("target").asString()).isEqualTo("api");
		assertThat(json(read).path("assignment").path("plan").asString()).isEqualTo("pro");
		assertThat(absent(json(read).path("assignment").path("expires"))).isTrue();
		JsonNode daily = json(read).path("limits");
		assertThat(daily).hasSize(1);
		assertThat(daily.get(0).path("name").asString()).isEqualTo("daily");
		assertThat(daily.get(0).path("limit").asLong()).isEqualTo(10);
		long used = 10 - daily.get(0).path("remaining").asLong();
		assertThat(used).isEqualTo(this.downstream.hits("/orders/items", client) + this.downstream.hits("/search/items", client));
		// a route's read shows the scope's assignment that decides it there
		assertThat(json(operator(0, HttpMethod.GET, "orders/" + client, null)).path("assignment").path("target").asString())
			.isEqualTo("api");
		Answer reset = operator(1, HttpMethod.DELETE, "api/" + client, null);
		assertThat(json(reset).path("deletedKeys").asLong()).isEqualTo(1);
		assertThat(json(operator(0, HttpMethod.GET, "api/" + client, null)).path("limits").get(0).path("remaining").asLong())
			.isEqualTo(10);

		Answer cleared = operator(1, HttpMethod.POST, "api/" + client, "{\"clear\": true}");
		assertThat(cleared.status()).as(cleared.body()).isEqualTo(200);
		assertThat(absent(json(cleared).path("assignment"))).isTrue();
		long started = System.nanoTime();
		while (!FREE.equals(get(0, "orders", client).policy())) {
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
		}
		assertThat(absent(json(operator(0, HttpMethod.GET, "api/" + client, null)).path("assignment"))).isTrue();
	}

	/**
	 * An override may be a calendar quota (calendar, timeZone, weekStart) or carry a penalty (blockFor), as a
	 * route's limit may: the endpoint takes the fields by the names GET shows.
	 */
	@Test
	void theEndpointOverridesWithACalendarQuotaOrAPenalty() {
		String monthly = key();
		Answer quota = operator(0, HttpMethod.POST, "orders/" + monthly, "{\"limit\": 1, \"calendar\": \"month\", "
				+ "\"timeZone\": \"Pacific/Kiritimati\", \"name\": \"monthly\"}");
		assertThat(quota.status()).as(quota.body()).isEqualTo(200);
		JsonNode limit = json(quota).path("assignment").path("limits").get(0);
		assertThat(limit.path("calendar").asString()).contains("month").contains("Pacific/Kiritimati");
		millisUntilSeenOnTheOtherInstance("orders", monthly, true);
		assertThat(get(1, "orders", monthly).status()).isEqualTo(200);
		Answer refused = get(0, "orders", monthly);
		assertThat(refused.status()).isEqualTo(429);
		// until the month ends at Kiritimati (UTC+14), not a window from the first request
		java.time.ZonedDateTime now = java.time.ZonedDateTime.now(java.time.ZoneId.of("Pacific/Kiritimati"));
		long untilMonthEnd = Duration.between(now, now.toLocalDate().withDayOfMonth(1).plusMonths(1)
			.atStartOfDay(now.getZone())).toSeconds();
		assertThat(Long.parseLong(refused.headers().getFirst("Retry-After"))).isBetween(untilMonthEnd - 5,
				untilMonthEnd + 5);

		String penalised = key();
		Answer penalty = operator(0, HttpMethod.POST, "orders/" + penalised,
				"{\"limit\": 1, \"window\": \"1s\", \"blockFor\": \"10m\"}");
		assertThat(penalty.status()).as(penalty.body()).isEqualTo(200);
		assertThat(json(penalty).path("assignment").path("limits").get(0).path("blockFor").asString()).isEqualTo("PT10M");
		millisUntilSeenOnTheOtherInstance("orders", penalised, true);
		assertThat(get(0, "orders", penalised).status()).isEqualTo(200);
		Answer blocked = get(1, "orders", penalised);
		assertThat(blocked.status()).isEqualTo(429);
		assertThat(Long.parseLong(blocked.headers().getFirst("Retry-After"))).as("the penalty's, not the window's")
			.isBetween(590L, 600L);
		sleep(1_100);
		assertThat(get(0, "orders", penalised).status()).as("blocked past the window").isEqualTo(429);

		Answer wrong = operator(0, HttpMethod.POST, "orders/" + key(), "{\"limit\": 1, \"calendar\": \"year\"}");
		assertThat(wrong.status()).isEqualTo(400);
		assertThat(json(wrong).path("field").asString()).isEqualTo("calendar");
	}

	/**
	 * A limit of its own on one route, through one instance, until it expires: the other denies at it. Its
	 * window (a day) differs from the plan's (366 days): the plan's count moves into the day, and back.
	 */
	@Test
	void theEndpointOverridesALimitThatTheOtherInstanceDeniesAtUntilItExpires() {
		String client = key();
		assertThat(get(0, "orders", client).status()).isEqualTo(200);
		Answer override = operator(0, HttpMethod.POST, "orders/" + client,
				"{\"limit\": 2, \"window\": \"1d\", \"algorithm\": \"fixed-window\", \"name\": \"tight\", \"expires\": \"3s\"}");
		assertThat(override.status()).as(override.body()).isEqualTo(200);
		JsonNode assignment = json(override).path("assignment");
		assertThat(assignment.path("limits").get(0).path("limit").asLong()).isEqualTo(2);
		assertThat(Instant.parse(assignment.path("expires").asString())).isBetween(Instant.now().plusSeconds(1),
				Instant.now().plusSeconds(4));
		// seen without requests: free's per-route limit counts in the same key as this fixed window
		millisUntilSeenOnTheOtherInstance("orders", client, true);
		// the one used of the plan's year is used in this day: one more
		Answer first = get(1, "orders", client);
		assertThat(first.status()).isEqualTo(200);
		assertThat(first.policy()).isEqualTo("\"tight\";q=2;w=" + Duration.ofDays(1).toSeconds());
		Answer refused = get(0, "orders", client);
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.body()).contains("\"violated-policies\":[\"tight\"]");
		// refused until the day ends, not the plan's year
		assertThat(Long.parseLong(refused.headers().getFirst("Retry-After"))).isBetween(1L, Duration.ofDays(1).toSeconds());
		assertThat(this.downstream.hits("/orders/items", client)).isEqualTo(2);

		long started = System.nanoTime();
		Answer expired = get(1, "orders", client);
		while (!FREE.equals(expired.policy())) {
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("expired").isLessThan(Duration.ofSeconds(5));
			sleep(50);
			expired = get(1, "orders", client);
		}
		// free's per-route limit of 3 counts in the same fixed-window key: the day's 2 are used in its year,
		// one left
		assertThat(expired.status()).isEqualTo(200);
		assertThat(get(0, "orders", client).status()).isEqualTo(429);
	}

	/**
	 * An override of 4 on scope api (M6): it replaces the scope's daily limit only and counts once across
	 * orders and search, the per-route limit still applies, a read of the scope shows it, and a reset of the
	 * scope serves the client again on both routes, from every instance's deny cache too.
	 */
	@Test
	void anOverrideOnAScopeReplacesTheScopesLimitOnlyAndCountsOnceAcrossItsRoutes() {
		String client = key();
		Answer override = operator(0, HttpMethod.POST, "api/" + client, "{\"limit\": 4, \"window\": \"" + YEAR + "\"}");
		assertThat(override.status()).as(override.body()).isEqualTo(200);
		millisUntilSeenOnTheOtherInstance("api", client, true);
		String overridden = "\"per-route\";q=3;w=" + W + ", \"daily\";q=4;w=" + W;
		for (int i = 0; i < 2; i++) {
			Answer orders = get(i, "orders", client);
			assertThat(orders.status()).isEqualTo(200);
			assertThat(orders.policy()).as("the route's own limit stays, the override keeps the scope limit's name")
				.isEqualTo(overridden);
			assertThat(get(1 - i, "search", client).status()).isEqualTo(200);
		}
		// 4 passed across both routes: the scope refuses on either route and either instance
		for (int i = 0; i < 2; i++) {
			for (String route : List.of("orders", "search")) {
				Answer refused = get(i, route, client);
				assertThat(refused.status()).as(route + " on instance " + i).isEqualTo(429);
				assertThat(refused.headers().getFirst("RateLimit")).startsWith("\"daily\";r=0;");
			}
		}
		assertThat(this.downstream.hits("/orders/items", client) + this.downstream.hits("/search/items", client))
			.isEqualTo(4);

		JsonNode read = json(operator(1, HttpMethod.GET, "api/" + client, null));
		assertThat(read.path("assignment").path("target").asString()).isEqualTo("api");
		JsonNode limits = read.path("limits");
		assertThat(limits).as(read.toString()).hasSize(1);
		assertThat(limits.get(0).path("name").asString()).isEqualTo("daily");
		assertThat(limits.get(0).path("scope").asString()).isEqualTo("api");
		assertThat(limits.get(0).path("limit").asLong()).isEqualTo(4);
		assertThat(limits.get(0).path("remaining").asLong()).isZero();

		Answer reset = operator(1, HttpMethod.DELETE, "api/" + client, null);
		assertThat(reset.status()).as(reset.body()).isEqualTo(200);
		assertThat(json(reset).path("deletedKeys").asLong()).isEqualTo(1);
		assertThat(json(operator(0, HttpMethod.GET, "api/" + client, null)).path("limits").get(0).path("remaining")
			.asLong()).isEqualTo(4);
		// every instance forgets its denials on every route naming the scope: Redis decides again, so the
		// client is served, and then refused by each route's own limit (3 used), not by a cached daily denial
		assertThat(get(0, "orders", client).status()).isEqualTo(200);
		assertThat(get(1, "search", client).status()).isEqualTo(200);
		for (int i = 0; i < 2; i++) {
			Answer perRoute = get(1 - i, (i == 0) ? "orders" : "search", client);
			assertThat(perRoute.status()).isEqualTo(429);
			assertThat(perRoute.headers().getFirst("RateLimit")).as("the route's own limit still applies")
				.startsWith("\"per-route\";r=0;");
		}
		assertThat(json(operator(0, HttpMethod.GET, "api/" + client, null)).path("limits").get(0).path("remaining")
			.asLong()).isEqualTo(2);
	}

	/**
	 * A client that used part of free's year (2 of 3 on orders, 3 of 5 in scope api) is given plan day (4 and
	 * 6 a day) on the scope: what it used stays used, restated in the day's windows, so it gets the day's
	 * quota less what it used, refused until the day ends rather than the year. Cleared back to free, what
	 * the day's plan let through counts in free's year again: nothing fresh.
	 */
	@Test
	void aPlanAssignedToAClientThatUsedQuotaKeepsWhatItUsedInTheNewPlansWindows() {
		String client = usedThreeInTheScopeThen("{\"plan\": \"day\"}");
		assertThat(json(operator(1, HttpMethod.GET, "api/" + client, null)).path("limits").get(0).path("remaining")
			.asLong()).as("the scope's 3 used, read in the day").isEqualTo(3);
		// orders: 2 of the day's 4 used there, 2 left
		Answer first = get(1, "orders", client);
		assertThat(first.status()).isEqualTo(200);
		assertThat(first.policy()).isEqualTo(DAY);
		assertThat(get(0, "orders", client).status()).isEqualTo(200);
		Answer perRoute = get(1, "orders", client);
		assertThat(perRoute.status()).isEqualTo(429);
		assertThat(perRoute.body()).contains("\"violated-policies\":[\"per-route\"]");
		assertThat(Long.parseLong(perRoute.headers().getFirst("Retry-After"))).as("the day's fixed window, not the year")
			.isBetween(1L, D);
		// the scope: 5 of the day's 6 used, 1 left
		assertThat(get(0, "search", client).status()).isEqualTo(200);
		Answer scope = get(1, "search", client);
		assertThat(scope.status()).isEqualTo(429);
		assertThat(scope.body()).contains("\"violated-policies\":[\"daily\"]");
		assertRefusedWithinADayAndAFraction(scope, 6);
		// six passed in all: the day plan's scope limit, not that limit on top of what free let through
		assertThat(this.downstream.hits("/orders/items", client) + this.downstream.hits("/search/items", client))
			.isEqualTo(6);

		clearedOnTheScope(client);
		// the 6 the day let through are more than free's 5 a year: refused on both routes and instances
		for (int i = 0; i < 2; i++) {
			for (String route : List.of("orders", "search")) {
				Answer refused = get(i, route, client);
				assertThat(refused.status()).as(route + " on instance " + i).isEqualTo(429);
				assertThat(refused.policy()).isEqualTo(FREE);
			}
		}
		assertThat(this.downstream.hits("/orders/items", client) + this.downstream.hits("/search/items", client))
			.isEqualTo(6);
	}

	/**
	 * Plan day given for 3 s on the scope to a client that used 3 of free's 5 a year: it uses what the day
	 * leaves it on both routes, and once the assignment has expired on every instance, free applies with all
	 * the client used counted in free's year (the day's count restated in the year's window): refused on both
	 * routes and instances until the year's weight lets go (at least a fifth of it), not the day's.
	 */
	@Test
	void aPlanThatExpiresLeavesWhatTheClientUsedUnderItCountedInTheDefaultPlansWindows() {
		String client = usedThreeInTheScopeThen("{\"plan\": \"day\", \"expires\": \"3s\"}");
		Answer orders = get(1, "orders", client);
		assertThat(orders.status()).isEqualTo(200);
		assertThat(orders.policy()).isEqualTo(DAY);
		assertThat(get(0, "search", client).status()).isEqualTo(200);
		long started = System.nanoTime();
		while (assignments(0).find("api", stored("api", client)) != null || assignments(1).find("api", stored("api", client)) != null) {
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("expired on both instances")
				.isLessThan(Duration.ofSeconds(6));
			sleep(20);
		}
		// 5 used in the scope (3 under free, 2 under the day), free's 5 a year: nothing fresh
		for (int i = 0; i < 2; i++) {
			for (String route : List.of("orders", "search")) {
				Answer refused = get(i, route, client);
				assertThat(refused.status()).as(route + " on instance " + i).isEqualTo(429);
				assertThat(refused.policy()).isEqualTo(FREE);
				assertThat(Long.parseLong(refused.headers().getFirst("Retry-After")))
					.as("refused in the year's terms, not the day's").isGreaterThan(W / 5 - D);
			}
		}
		assertThat(this.downstream.hits("/orders/items", client) + this.downstream.hits("/search/items", client))
			.isEqualTo(5);
	}

	/**
	 * A new client that used 2 on orders and 1 on search under free (3 of the scope's 5), then had
	 * {@code change} posted on scope api through instance 0, seen by instance 1.
	 */
	private String usedThreeInTheScopeThen(String change) {
		String client = key();
		assertThat(List.of(get(0, "orders", client), get(1, "orders", client), get(0, "search", client)))
			.extracting(Answer::status)
			.containsOnly(200);
		Answer changed = operator(0, HttpMethod.POST, "api/" + client, change);
		assertThat(changed.status()).as(changed.body()).isEqualTo(200);
		millisUntilSeenOnTheOtherInstance("api", client, true);
		return client;
	}

	/** The client's plan or override on scope api cleared through instance 0, seen by instance 1. */
	private void clearedOnTheScope(String client) {
		Answer cleared = operator(0, HttpMethod.POST, "api/" + client, "{\"clear\": true}");
		assertThat(cleared.status()).as(cleared.body()).isEqualTo(200);
		millisUntilSeenOnTheOtherInstance("api", client, false);
	}

	/**
	 * The counter's Retry-After for a day's limit of {@code limit} used up: at most the rest of the day and then
	 * the previous window's weight fading by one request's share (a {@code limit}-th of a day): far below the
	 * year free counts in. (Early in the UTC day the first part is nearly a whole day: a bound of a sixth for a
	 * limit of 4 failed before 02:00.)
	 */
	private static void assertRefusedWithinADayAndAFraction(Answer refused, int limit) {
		assertThat(Long.parseLong(refused.headers().getFirst("Retry-After"))).as("refused until the day's window lets go")
			.isBetween(1L, D + D / limit + 1);
	}

	/**
	 * A client that used 3 of free's 5 a year in scope api (2 on orders, 1 on search) gets an override of 4 a
	 * day on the scope: the 3 are the day's, so one more passes, then it is refused on both routes until the
	 * day ends, not the year. Cleared, the 4 count in free's year: one more, then refused.
	 */
	@Test
	void anOverrideOnAScopeForAClientThatUsedQuotaKeepsWhatItUsedInTheOverridesWindow() {
		String client = usedThreeInTheScopeThen("{\"limit\": 4, \"window\": \"1d\"}");
		Answer last = get(1, "search", client);
		assertThat(last.status()).isEqualTo(200);
		assertThat(last.policy()).isEqualTo("\"per-route\";q=3;w=" + W + ", \"daily\";q=4;w=" + D);
		for (int i = 0; i < 2; i++) {
			for (String route : List.of("orders", "search")) {
				Answer refused = get(i, route, client);
				assertThat(refused.status()).as(route + " on instance " + i).isEqualTo(429);
				assertThat(refused.headers().getFirst("RateLimit")).startsWith("\"daily\";r=0;");
				assertRefusedWithinADayAndAFraction(refused, 4);
			}
		}
		assertThat(this.downstream.hits("/orders/items", client) + this.downstream.hits("/search/items", client))
			.isEqualTo(4);

		clearedOnTheScope(client);
		// free's 5 a year with the day's 4 in it: one more
		Answer again = get(1, "search", client);
		assertThat(again.status()).isEqualTo(200);
		assertThat(again.policy()).isEqualTo(FREE);
		Answer refused = get(0, "orders", client);
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.headers().getFirst("RateLimit")).startsWith("\"daily\";r=0;");
		assertThat(this.downstream.hits("/orders/items", client) + this.downstream.hits("/search/items", client))
			.isEqualTo(5);
	}

	@Test
	void theEndpointRefusesWhatCannotBeAssignedNamingTheField() {
		String client = key();
		assertRefused(operator(0, HttpMethod.POST, "orders/" + client, "{\"plan\": \"gold\"}"), "plan",
				"plan is 'gold'; allowed: one of day, free, pro");
		assertRefused(operator(0, HttpMethod.POST, "orders/" + client, "{\"limit\": 5, \"window\": \"soon\"}"),
				"window", "window is 'soon'; allowed: a duration");
		assertRefused(operator(0, HttpMethod.POST, "orders/" + client, "{\"limit\": 0, \"window\": \"1m\"}"),
				"limit", "limit is '0'; allowed: a whole number");
		assertRefused(operator(0, HttpMethod.POST, "orders/" + client,
				"{\"limit\": 5, \"window\": \"1m\", \"logStorage\": \"ring\"}"), "logStorage", "logStorage is 'ring'");
		assertRefused(operator(0, HttpMethod.POST, "orders/" + client, "{\"plan\": \"pro\", \"expires\": \"later\"}"),
				"expires", "expires is 'later'");
		assertRefused(operator(0, HttpMethod.POST, "orders/" + client, "{\"plna\": \"pro\"}"), "plna",
				"plna is not a field of this endpoint; allowed: one of plan, ");
		assertRefused(operator(0, HttpMethod.POST, "orders/" + client, "{}"), "plan", "plan is missing");
		// thousands of years would be stored and then ignored by every instance: refused instead
		assertRefused(operator(0, HttpMethod.POST, "orders/" + client, "{\"plan\": \"pro\", \"expires\": \"1000000d\"}"),
				"expires", "expires is '1000000d'; allowed: a duration of at least 1ms and at most 3650d");
		assertRefused(operator(0, HttpMethod.POST, "api/" + client, "{\"limit\": 5, \"window\": \"1m\", \"scope\": \"ab\"}"),
				"scope", "scope is 'ab' on an override made on scope 'api'; allowed: 'api' or none");
		// a typo'd target is no route and no scope, though the default filters have no policy here either
		assertThat(operator(0, HttpMethod.POST, "ordres/" + client, "{\"limit\": 5, \"window\": \"1m\"}").status())
			.isEqualTo(404);
		assertRefused(operator(0, HttpMethod.POST, "a/" + client, "{\"plan\": \"pro\"}"), "plan",
				"route 'a', which has limits of its own");
		assertRefused(operator(0, HttpMethod.POST, "ab/" + client, "{\"plan\": \"pro\"}"), "plan",
				"scope 'ab', whose routes all have limits of their own");
		assertThat(operator(0, HttpMethod.POST, "nowhere/" + client, "{\"plan\": \"pro\"}").status()).isEqualTo(404);
		// Boot reads an operation's body as flat text fields: a list of limits is refused before the endpoint
		Answer nested = operator(0, HttpMethod.POST, "orders/" + client,
				"{\"limits\": [{\"limit\": 5, \"window\": \"1m\"}]}");
		assertThat(nested.status()).as(nested.body()).isEqualTo(400);
		// nothing was written
		assertThat(assignments(0).find("orders", stored("orders", client))).isNull();
		assertThat(assignments(0).find("a", stored("a", client))).isNull();
		assertThat(assignments(0).find("ab", stored("ab", client))).isNull();
		assertThat(assignments(0).find("api", stored("api", client))).isNull();
	}

	private static void assertRefused(Answer answer, String field, String message) {
		assertThat(answer.status()).as(answer.body()).isEqualTo(400);
		assertThat(json(answer).path("field").asString()).isEqualTo(field);
		assertThat(json(answer).path("error").asString()).contains(message);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void anUndeclaredPlanCannotBeAssigned() {
		org.assertj.core.api.Assertions
			.assertThatThrownBy(() -> assignments(0).assign("orders", key(), "gold", null).block())
			.hasMessageContaining("Plan 'gold' is not declared; declared: ");
	}

	@Test
	void withoutTheRequestTheRoutesDefaultPlanDecides() {
		// called as the gateway's SPI is, but outside any request: no exchange in the Reactor context
		WindowRateLimiter limiter = this.instances.get(0).getBean(WindowRateLimiter.class);
		RateLimiter.Response response = limiter.isAllowed("orders", key()).block(Duration.ofSeconds(5));
		assertThat(response.isAllowed()).isTrue();
		assertThat(response.getHeaders()).containsEntry("RateLimit-Policy", FREE);
	}

}
