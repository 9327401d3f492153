package io.windowlimiter.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.cloud.gateway.event.RefreshRoutesEvent;
import org.springframework.cloud.gateway.event.RefreshRoutesResultEvent;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.handler.predicate.PredicateDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.route.RouteDefinitionWriter;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the operator endpoint takes for a target while the default filters have a policy: a route of the
 * gateway (its own limits or only the default filters') or a scope, never a typo; and a route deleted at
 * run time is forgotten: gone from the endpoint, no longer pinning its scope's limits.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=ratelimits")
@AutoConfigureWebTestClient(timeout = "PT30S")
class RouteTargetsTests {

	private static final String DEFAULTS = "spring.cloud.gateway.server.webflux.default-filters[0].";

	private static final String PLAIN = "spring.cloud.gateway.server.webflux.routes[0].";

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@Autowired
	private RouteDefinitionWriter routes;

	@Autowired
	private ApplicationEventPublisher events;

	@Autowired
	private ConfigurableApplicationContext context;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		registry.add(DEFAULTS + "name", () -> "RequestRateLimiter");
		registry.add(DEFAULTS + "args.rate-limiter", () -> "#{@windowRateLimiter}");
		registry.add(DEFAULTS + "args.key-resolver", () -> "#{@headerKeyResolver}");
		registry.add(DEFAULTS + "args.window-rate-limiter.limit", () -> "100");
		registry.add(DEFAULTS + "args.window-rate-limiter.window", () -> "1m");
		// a route limited by the default filters alone
		registry.add(PLAIN + "id", () -> "plain");
		registry.add(PLAIN + "uri", downstream::uri);
		registry.add(PLAIN + "predicates[0]", () -> "Path=/plain/**");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private EntityExchangeResult<String> operator(HttpMethod method, String path, String json) {
		// a connection each: on Reactor Netty 1.3.6 a request that follows a synchronously answered one on a
		// keep-alive connection may hang (NOTES.md, reactor-netty #4361), which is not what this test is about
		WebTestClient.RequestBodySpec request = this.client.method(method)
			.uri("/actuator/ratelimits" + (path.isEmpty() ? "" : "/" + path))
			.header("Connection", "close");
		if (json != null) {
			request.contentType(MediaType.APPLICATION_JSON).bodyValue(json);
		}
		return request.exchange().expectBody(String.class).returnResult();
	}

	private static JsonNode json(EntityExchangeResult<String> result) {
		return JsonMapper.shared().readTree(result.getResponseBody());
	}

	@Test
	void aTypoIsNoTargetThoughTheDefaultFiltersHaveAPolicy() {
		for (EntityExchangeResult<String> typo : List.of(
				operator(HttpMethod.POST, "plian/someone", "{\"limit\": 5, \"window\": \"1m\"}"),
				operator(HttpMethod.GET, "plian/someone", null), operator(HttpMethod.GET, "plian", null),
				operator(HttpMethod.DELETE, "plian/someone", null))) {
			assertThat(typo.getStatus().value()).as(typo.getResponseBody()).isEqualTo(404);
			assertThat(json(typo).path("error").asString()).contains("No route or scope 'plian'");
		}
		// a route of the gateway limited by the default filters alone is a target
		EntityExchangeResult<String> plain = operator(HttpMethod.POST, "plain/someone",
				"{\"limit\": 5, \"window\": \"1m\"}");
		assertThat(plain.getStatus().value()).as(plain.getResponseBody()).isEqualTo(200);
		assertThat(operator(HttpMethod.POST, "plain/someone", "{\"clear\": true}").getStatus().value()).isEqualTo(200);
	}

	@Test
	void aDeletedRouteIsForgottenAndNoLongerPinsItsScope() throws Exception {
		this.routes.save(Mono.just(route("temp", "4"))).block(Duration.ofSeconds(5));
		assertThat(refresh().isSuccess()).isTrue();
		JsonNode all = json(operator(HttpMethod.GET, "", null));
		assertThat(all.path("routes").propertyNames()).contains("temp");
		assertThat(all.path("scopes").path("shared").path("routes").toString()).isEqualTo("[\"temp\"]");

		this.routes.delete(Mono.just("temp")).block(Duration.ofSeconds(5));
		assertThat(refresh().isSuccess()).isTrue();
		all = json(operator(HttpMethod.GET, "", null));
		assertThat(all.path("routes").propertyNames()).doesNotContain("temp");
		assertThat(all.path("scopes").propertyNames()).doesNotContain("shared");
		assertThat(operator(HttpMethod.GET, "temp", null).getStatus().value()).isEqualTo(404);

		// the scope's limits may change now that no route names it
		this.routes.save(Mono.just(route("temp2", "8"))).block(Duration.ofSeconds(5));
		RefreshRoutesResultEvent added = refresh();
		assertThat(added.isSuccess()).as(String.valueOf(added.getThrowable())).isTrue();
		assertThat(json(operator(HttpMethod.GET, "", null)).path("scopes").path("shared").path("routes").toString())
			.isEqualTo("[\"temp2\"]");
	}

	private static RouteDefinition route(String id, String limit) {
		RouteDefinition route = new RouteDefinition();
		route.setId(id);
		route.setUri(URI.create(downstream.uri()));
		route.setPredicates(List.of(new PredicateDefinition("Path=/" + id + "/**")));
		FilterDefinition limiter = new FilterDefinition();
		limiter.setName("RequestRateLimiter");
		limiter.setArgs(Map.of("rate-limiter", "#{@windowRateLimiter}", "key-resolver", "#{@headerKeyResolver}",
				"window-rate-limiter.limit", limit, "window-rate-limiter.window", "1m", "window-rate-limiter.scope",
				"shared"));
		route.setFilters(List.of(limiter));
		return route;
	}

	private RefreshRoutesResultEvent refresh() throws Exception {
		CompletableFuture<RefreshRoutesResultEvent> result = new CompletableFuture<>();
		this.context.addApplicationListener((ApplicationListener<RefreshRoutesResultEvent>) result::complete);
		this.events.publishEvent(new RefreshRoutesEvent(this));
		return result.get(10, TimeUnit.SECONDS);
	}

}
