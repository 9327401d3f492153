package io.windowlimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;

/**
 * An override whose limit a request of the route's cost cannot fit would refuse the client for good (or,
 * before, let it through unlimited when the script failed): it is refused through the endpoint and through
 * Java, naming {@code limit} and the cost, and one read back from Redis is ignored on that route. Routes
 * {@code export} (cost 10) and {@code list} (cost 1) share scope {@code files}: 100 a minute.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=ratelimits")
@AutoConfigureWebTestClient(timeout = "PT30S")
class OverrideCostTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@Autowired
	private PlanAssignments assignments;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		TestRoutes.route(registry, 0, "export", downstream, "window-rate-limiter.limit=100",
				"window-rate-limiter.window=1m", "window-rate-limiter.scope=files", "window-rate-limiter.cost=10");
		TestRoutes.route(registry, 1, "list", downstream, "window-rate-limiter.limit=100",
				"window-rate-limiter.window=1m", "window-rate-limiter.scope=files");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private EntityExchangeResult<String> post(String target, String client, String json) {
		return this.client.post()
			.uri("/actuator/ratelimits/" + target + "/" + client)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(json)
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	private int status(String route, String client) {
		return this.client.get()
			.uri("/" + route + "/items")
			.header("X-API-Key", client)
			.exchange()
			.expectBody(String.class)
			.returnResult()
			.getStatus()
			.value();
	}

	@Test
	void theEndpointRefusesAnOverrideBelowTheCostOfARouteItAppliesOn() {
		String client = UUID.randomUUID().toString();
		EntityExchangeResult<String> onRoute = post("export", client,
				"{\"limit\": 5, \"window\": \"1m\", \"algorithm\": \"sliding-log\"}");
		assertThat(onRoute.getStatus().value()).as(onRoute.getResponseBody()).isEqualTo(400);
		assertThat(onRoute.getResponseBody()).contains("\"field\":\"limit\"")
			.contains("limit is '5', less than the cost '10' of a request on route 'export'");
		// the scope's routes cost 10 and 1: checked against each
		EntityExchangeResult<String> onScope = post("files", client, "{\"limit\": 9, \"window\": \"1m\"}");
		assertThat(onScope.getStatus().value()).as(onScope.getResponseBody()).isEqualTo(400);
		assertThat(onScope.getResponseBody()).contains("limit is '9', less than the cost '10' of a request on route 'export'");
		EntityExchangeResult<String> burst = post("export", client,
				"{\"limit\": 50, \"window\": \"1m\", \"algorithm\": \"token-bucket\", \"burst\": 5}");
		assertThat(burst.getStatus().value()).as(burst.getResponseBody()).isEqualTo(400);
		assertThat(burst.getResponseBody()).contains("\"field\":\"burst\"").contains("burst is '5', less than the cost '10'");
		assertThat(this.assignments.find("export", client)).isNull();
		assertThat(this.assignments.find("files", client)).isNull();
		// a limit the cost fits is taken, on the cheap route as on the scope
		assertThat(post("list", client, "{\"limit\": 5, \"window\": \"1m\"}").getStatus().value()).isEqualTo(200);
		assertThat(post("files", client, "{\"limit\": 10, \"window\": \"1m\"}").getStatus().value()).isEqualTo(200);
	}

	@Test
	void javaRefusesAnOverrideBelowTheCostWithTheSameMessage() {
		String client = UUID.randomUUID().toString();
		assertThatExceptionOfType(InvalidRouteConfigurationException.class)
			.isThrownBy(() -> this.assignments.override("export", client,
					List.of(Map.of("limit", 5, "window", "1m", "algorithm", "sliding-log")), null))
			.satisfies(ex -> assertThat(ex.getProperty()).isEqualTo("limits[0].limit"))
			.withMessageContaining("limits[0].limit is '5', less than the cost '10' of a request on route 'export'");
		assertThat(this.assignments.find("export", client)).isNull();
	}

	@Test
	void anOverrideBelowTheCostReadBackFromRedisIsIgnoredOnThatRoute() {
		String client = UUID.randomUUID().toString();
		// written by an instance that does not check (an earlier version, or by hand)
		PlanAssignments unchecked = new PlanAssignments(RedisTestServer.get().template(), Set.of(),
				Duration.ofSeconds(1), 10_000, Duration.ofSeconds(10), System::currentTimeMillis);
		unchecked.override("export", client, List.of(Map.of("limit", 5, "window", "1m", "algorithm", "sliding-log")),
				Duration.ofMinutes(1)).block(Duration.ofSeconds(5));
		this.assignments.refresh().block(Duration.ofSeconds(5));
		assertThat(this.assignments.find("export", client)).isNotNull();
		// the route's own 100 a minute decide it: 10 requests of cost 10, then refused; neither let through
		// unlimited (the script used to fail, and fail-mode open passed every request) nor refused for good
		int allowed = 0;
		for (int i = 0; i < 12; i++) {
			allowed += (status("export", client) == 200) ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(10);
		assertThat(downstream.hits("/export/items", client)).isEqualTo(10);
		unchecked.clear("export", client).block(Duration.ofSeconds(5));
	}

}
