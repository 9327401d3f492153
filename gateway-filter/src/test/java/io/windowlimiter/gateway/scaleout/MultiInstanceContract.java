package io.windowlimiter.gateway.scaleout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.core.operations.RateLimitOperations;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.gateway.test.Downstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateway instances (two application contexts, each with its own connections and limiter) on
 * one Redis enforce one limit: requests raced through both let exactly the limit through. Windows
 * are 366 days long, so no window edge falls inside a test. One subclass per Redis topology.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MultiInstanceContract {

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	private static final int LIMIT = 50;

	private final Downstream downstream = Downstream.start();

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private final WebClient client = WebClient.create();

	/** The {@code spring.data.redis.*} properties of the Redis both instances share. */
	abstract List<String> redisProperties();

	@BeforeAll
	void startTwoInstances() {
		for (int i = 0; i < 2; i++) {
			this.instances.add(new SpringApplicationBuilder(GatewayTestApplication.class)
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
		// the operator endpoint, for resets made through one instance
		properties.add("management.endpoints.web.exposure.include=ratelimits");
		// assignments loaded at start only: what reaches the other instance within a second is the broadcast
		properties.add("window-rate-limiter.assignments.refresh-interval=1h");
		String[][] routes = { { "fixed", "fixed-window" }, { "log", "sliding-log" },
				{ "counter", "sliding-window-counter" } };
		for (int i = 0; i < routes.length; i++) {
			String route = ROUTES + "[" + i + "].";
			properties.add(route + "id=" + routes[i][0]);
			properties.add(route + "uri=" + this.downstream.uri());
			properties.add(route + "predicates[0]=Path=/" + routes[i][0] + "/**");
			properties.add(route + "filters[0].name=RequestRateLimiter");
			properties.add(route + "filters[0].args.rate-limiter=#{@windowRateLimiter}");
			properties.add(route + "filters[0].args.key-resolver=#{@headerKeyResolver}");
			properties.add(route + "filters[0].args.window-rate-limiter.algorithm=" + routes[i][1]);
			properties.add(route + "filters[0].args.window-rate-limiter.limit=" + LIMIT);
			properties.add(route + "filters[0].args.window-rate-limiter.window=366d");
		}
		return properties;
	}

	private String url(int instance, String path) {
		int port = ((WebServerApplicationContext) this.instances.get(instance)).getWebServer().getPort();
		return "http://127.0.0.1:" + port + path;
	}

	private Mono<Integer> request(int instance, String path, String apiKey) {
		return this.client.get()
			.uri(url(instance, path))
			.header("X-API-Key", apiKey)
			.exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()));
	}

	@ParameterizedTest
	@ValueSource(strings = { "fixed", "log", "counter" })
	void requestsRacedThroughBothInstancesLetExactlyTheLimitThrough(String route) {
		String apiKey = UUID.randomUUID().toString();
		String path = "/" + route + "/items";
		// 200 requests, alternating between the instances, 64 in flight at once
		Map<Integer, Long> statuses = Flux.range(0, 4 * LIMIT)
			.flatMap(i -> request(i % 2, path, apiKey), 64)
			.collect(Collectors.groupingBy(Function.identity(), Collectors.counting()))
			.block(Duration.ofSeconds(60));
		assertThat(statuses).isEqualTo(Map.of(200, (long) LIMIT, 429, 3L * LIMIT));
		assertThat(this.downstream.hits(path, apiKey)).isEqualTo(LIMIT);
	}

	/**
	 * The second instance refuses the client from its deny cache; a reset made through the first reaches
	 * it over Redis pub/sub, and it serves the client again within a second.
	 */
	@Test
	void aResetThroughOneInstanceReachesTheOthersDenyCache() {
		String apiKey = UUID.randomUUID().toString();
		String path = "/log/items";
		long allowed = Flux.range(0, LIMIT + 1).concatMap(i -> request(1, path, apiKey)).filter(s -> s == 200).count()
			.block(Duration.ofSeconds(30));
		assertThat(allowed).isEqualTo(LIMIT);
		RateLimitOperations.Reset reset = this.instances.get(0)
			.getBean(RateLimitOperations.class)
			.reset("log", apiKey, null)
			.block(Duration.ofSeconds(5));
		// on a cluster PUBLISH counts only the subscribers of the node that took it, so no count is checked
		assertThat(reset.deletedKeys()).isEqualTo(1);
		long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
		int status = request(1, path, apiKey).block(Duration.ofSeconds(5));
		while (status != 200 && System.nanoTime() < deadline) {
			status = request(1, path, apiKey).block(Duration.ofSeconds(5));
		}
		assertThat(status).isEqualTo(200);
	}

	/**
	 * An override posted to one instance's endpoint reaches the other over the broadcast (its own polling is
	 * an hour away), which denies the client at the new limit within a second.
	 */
	@Test
	void anOverrideThroughOneInstanceIsAppliedByTheOtherOnTheBroadcast() {
		String apiKey = UUID.randomUUID().toString();
		int port = ((WebServerApplicationContext) this.instances.get(0)).getWebServer().getPort();
		int status = this.client.post()
			.uri("http://127.0.0.1:" + port + "/actuator/ratelimits/fixed/" + apiKey)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"limit\": 2, \"window\": \"366d\", \"algorithm\": \"fixed-window\"}")
			.exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()))
			.block(Duration.ofSeconds(10));
		assertThat(status).isEqualTo(200);
		long started = System.nanoTime();
		PlanAssignments other = this.instances.get(1).getBean(PlanAssignments.class);
		// an X-API-Key is a credential: assignments know the client by its hash, as the core makes it
		String stored = this.instances.get(1).getBean(io.windowlimiter.core.RateLimiterCore.class)
			.clientKeyOf("fixed", apiKey);
		while (other.find("fixed", stored) == null) {
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("heard by the other instance within 1 s")
				.isLessThan(Duration.ofSeconds(1));
			Thread.onSpinWait();
		}
		List<Integer> statuses = Flux.range(0, 3).concatMap(i -> request(1, "/fixed/items", apiKey)).collectList()
			.block(Duration.ofSeconds(10));
		assertThat(statuses).containsExactly(200, 200, 429);
	}

	@ParameterizedTest
	@ValueSource(strings = { "fixed", "log", "counter" })
	void whatOneInstanceAllowedTheOtherCounts(String route) {
		String apiKey = UUID.randomUUID().toString();
		String path = "/" + route + "/items";
		long firstAllowed = Flux.range(0, 30).concatMap(i -> request(0, path, apiKey)).filter(s -> s == 200).count().block();
		long secondAllowed = Flux.range(0, 30).concatMap(i -> request(1, path, apiKey)).filter(s -> s == 200).count().block();
		// instances counting on their own would allow 30 + 30
		assertThat(firstAllowed).isEqualTo(30);
		assertThat(secondAllowed).isEqualTo(LIMIT - 30);
	}

}
