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
import org.springframework.core.NestedExceptionUtils;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/** A route with a bad limit added at run time is refused; the routes already running stay. */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class RouteRefreshTests {

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
		TestRoutes.route(registry, 0, "running", downstream, "window-rate-limiter.limit=100",
				"window-rate-limiter.window=1m");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private int status(String path) {
		return this.client.get().uri(path).header("X-API-Key", "refresh-test").exchange()
			.returnResult(String.class).getStatus().value();
	}

	@Test
	void aBadRouteAddedAtRunTimeIsRefusedAndTheRunningRoutesStay() throws Exception {
		assertThat(status("/running/a")).isEqualTo(200);

		RouteDefinition bad = new RouteDefinition();
		bad.setId("added");
		bad.setUri(URI.create(downstream.uri()));
		bad.setPredicates(List.of(new PredicateDefinition("Path=/added/**")));
		FilterDefinition limiter = new FilterDefinition();
		limiter.setName("RequestRateLimiter");
		limiter.setArgs(Map.of("rate-limiter", "#{@windowRateLimiter}", "key-resolver", "#{@headerKeyResolver}",
				"window-rate-limiter.limit", "0",
				"window-rate-limiter.window", "1m"));
		bad.setFilters(List.of(limiter));
		this.routes.save(Mono.just(bad)).block(Duration.ofSeconds(5));

		CompletableFuture<RefreshRoutesResultEvent> result = new CompletableFuture<>();
		this.context.addApplicationListener((ApplicationListener<RefreshRoutesResultEvent>) result::complete);
		this.events.publishEvent(new RefreshRoutesEvent(this));

		RefreshRoutesResultEvent refreshed = result.get(10, TimeUnit.SECONDS);
		assertThat(refreshed.isSuccess()).isFalse();
		assertThat(NestedExceptionUtils.getMostSpecificCause(refreshed.getThrowable()))
			.hasMessageContaining("route 'added'")
			.hasMessageContaining("window-rate-limiter.limit is '0'");
		assertThat(status("/running/b")).isEqualTo(200);
		assertThat(status("/added/a")).isEqualTo(404);
	}

}
