package io.windowlimiter.mvc;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.windowlimiter.gateway.test.CountingDownstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Routes from properties changed at run time (Spring Cloud's refresh: {@code /actuator/refresh}, a config
 * server, a bus), with a client's counts in Redis: a route's new limits and window apply from the refresh on,
 * to the counts already there; a route removed leaves the endpoint; a route added is limited; the Java DSL
 * routes stay.
 */
@SpringBootTest(classes = MvcTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=health,ratelimits")
@DirtiesContext
class RouteRefreshMvcTests {

	private static final CountingDownstream downstream = new CountingDownstream();

	private static final String RUN = Long.toString(System.currentTimeMillis(), 36);

	private static final HttpClient client = HttpClient.newHttpClient();

	@LocalServerPort
	int port;

	@Autowired
	ContextRefresher refresher;

	@Autowired
	ConfigurableEnvironment environment;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("test.downstream", downstream::uri);
		Map<String, Object> routes = new LinkedHashMap<>();
		route(routes, 0, "changing", "algorithm=sliding-log", "limit=2", "window=1m");
		route(routes, 1, "leaving", "limit=1", "window=1m");
		routes.forEach((name, value) -> registry.add(name, () -> value));
	}

	private static void route(Map<String, Object> properties, int index, String id, String... args) {
		properties.putAll(MvcTestRoutes.route(index, id, downstream.uri(), args));
	}

	@AfterAll
	static void stop() {
		downstream.close();
	}

	@Test
	void aRefreshAppliesChangedLimitsToTheCountsInPlaceAndForgetsRemovedRoutes() throws Exception {
		String key = "refresh-" + RUN;
		assertThat(status("/changing/x", key)).isEqualTo(200);
		assertThat(status("/changing/x", key)).isEqualTo(200);
		assertThat(status("/changing/x", key)).as("third of 2 a minute").isEqualTo(429);
		assertThat(status("/leaving/x", key)).isEqualTo(200);
		assertThat(get("/actuator/ratelimits/leaving", null).statusCode()).isEqualTo(200);
		assertThat(status("/dsl/x", key)).as("a Java DSL route, known to the limiter from its first request").isEqualTo(200);

		// the operator's edit: 5 an hour on the route in use, one route gone, one new
		Map<String, Object> edited = new LinkedHashMap<>();
		route(edited, 0, "changing", "algorithm=sliding-log", "limit=5", "window=1h");
		route(edited, 1, "arriving", "limit=1", "window=1m");
		this.environment.getPropertySources().addFirst(new MapPropertySource("edited-routes", edited));
		this.refresher.refresh();

		HttpResponse<String> changed = get("/changing/x", key);
		assertThat(changed.statusCode()).as("the client's 2 logged in the old minute count in the new hour: 3 left")
			.isEqualTo(200);
		assertThat(changed.headers().firstValue("RateLimit-Policy")).hasValue("\"changing\";q=5;w=3600");
		assertThat(changed.headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
		assertThat(status("/changing/x", key)).isEqualTo(200);
		assertThat(status("/changing/x", key)).isEqualTo(200);
		assertThat(status("/changing/x", key)).as("sixth of 5 an hour").isEqualTo(429);
		assertThat(downstream.hits("/changing/x", key)).as("requests that reached the downstream").isEqualTo(5);

		assertThat(status("/arriving/x", key)).isEqualTo(200);
		assertThat(status("/arriving/x", key)).as("second of 1 a minute on the added route").isEqualTo(429);
		assertThat(status("/leaving/x", key)).as("the removed route").isEqualTo(404);
		assertThat(get("/actuator/ratelimits/leaving", null).statusCode()).as("the removed route's limits")
			.isEqualTo(404);
		String listed = get("/actuator/ratelimits", null).body();
		assertThat(listed).contains("\"changing\"", "\"arriving\"", "\"dsl\"").doesNotContain("\"leaving\"");
		assertThat(status("/dsl/x", key)).as("a Java DSL route after the refresh (2 a minute)").isEqualTo(200);
		assertThat(status("/dsl/x", key)).as("the DSL route's third").isEqualTo(429);

		Map<String, Object> bad = new LinkedHashMap<>();
		route(bad, 0, "arriving", "limit=1", "window=1m");
		route(bad, 1, "changing", "algorithm=sliding-log", "limit=0", "window=1h");
		this.environment.getPropertySources().addFirst(new MapPropertySource("bad-routes", bad));
		this.refresher.refresh();
		HttpResponse<String> misconfigured = get("/changing/x", key);
		assertThat(misconfigured.statusCode()).as("the route with the bad limit").isEqualTo(500);
		assertThat(misconfigured.body()).contains("misconfigured");
		assertThat(status("/arriving/x", "other-" + key)).as("the other routes serve").isEqualTo(200);
		assertThat(get("/actuator/ratelimits/changing", null).body()).as("the route's limits after a bad refresh")
			.contains("\"limit\":5");

		this.environment.getPropertySources().remove("bad-routes");
		this.refresher.refresh();
		assertThat(status("/arriving/x", "fixed-" + key)).as("the routes once the properties are fixed").isEqualTo(200);
		assertThat(status("/changing/x", key)).as("the client's five an hour, still used").isEqualTo(429);
	}

	private int status(String path, String key) throws IOException, InterruptedException {
		return get(path, key).statusCode();
	}

	private HttpResponse<String> get(String path, String key) throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(5));
		if (key != null) {
			request.header("X-API-Key", key);
		}
		return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
