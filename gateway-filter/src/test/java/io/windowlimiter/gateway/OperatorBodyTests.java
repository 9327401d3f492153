package io.windowlimiter.gateway;

import java.util.UUID;

import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
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

/**
 * An operator's POST does exactly what it says or nothing (issue 44, attack r2 10): a field the endpoint does not
 * take (a kebab-case spelling, a typo), a field given twice, or a scope no route names is a 400 naming the field,
 * and nothing is stored. Route {@code ops}: 3 a minute; route {@code files} in scope {@code shared}.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=ratelimits")
@AutoConfigureWebTestClient(timeout = "PT30S")
class OperatorBodyTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@Autowired
	private PlanAssignments assignments;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		TestRoutes.route(registry, 0, "ops", downstream, "window-rate-limiter.limit=3", "window-rate-limiter.window=1m");
		TestRoutes.route(registry, 1, "files", downstream, "window-rate-limiter.limit=100",
				"window-rate-limiter.window=1m", "window-rate-limiter.scope=shared");
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

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
			{"limit": 1, "window": "1h", "block-for": "10m"}                          | block-for | block-for is not a field of this endpoint; allowed: blockFor (the endpoint's fields are camelCase
			{"limit": 1, "window": "1h", "algorithm": "sliding-log", "log-storage": "sorted-set"} | log-storage | allowed: logStorage
			{"limit": 1, "window": "1h", "bogus": "x"}                                | bogus     | bogus is not a field of this endpoint; allowed: one of plan, limit, window,
			{"block": "10m", "bogus": true}                                           | bogus     | bogus is not a field of this endpoint
			{"exempt": true, "expire": "1h"}                                          | expire    | expire is not a field of this endpoint
			{"limit": 5000, "window": "1h", "unit": "tokens", "unit": "requests"}     | unit      | unit is given more than once; allowed: each field once
			{"limit": 1, "limit": 100, "window": "1h"}                                | limit     | limit is given more than once
			{"limit": 1, "window": "1h", "scope": "nosuch"}                           | scope     | scope is 'nosuch', which no route names; allowed: one of shared, or none
			""")
	void aBodyThatSaysMoreOrOtherThanTheEndpointTakesIsRefusedNamingTheFieldAndNothingIsApplied(String body,
			String field, String message) {
		String client = UUID.randomUUID().toString();
		EntityExchangeResult<String> answer = post("ops", client, body);
		assertThat(answer.getStatus().value()).as(answer.getResponseBody()).isEqualTo(400);
		assertThat(answer.getResponseBody()).contains("\"field\":\"" + field + "\"").contains(message);
		assertThat(this.assignments.find("ops", client)).as("nothing stored").isNull();
		assertThat(this.assignments.access("ops", client)).as("no block or exemption").isNull();
	}

	@Test
	void theFieldsAsWrittenAndAKnownScopeAreTaken() {
		String client = UUID.randomUUID().toString();
		EntityExchangeResult<String> answer = post("ops", client,
				"{\"limit\": 1, \"window\": \"1h\", \"blockFor\": \"10m\", \"scope\": \"shared\"}");
		assertThat(answer.getStatus().value()).as(answer.getResponseBody()).isEqualTo(200);
		assertThat(answer.getResponseBody()).contains("\"blockFor\":\"PT10M\"", "\"scope\":\"shared\"");
		assertThat(post("ops", client, "{\"clear\": true}").getStatus().value()).isEqualTo(200);
		// a body the endpoint cannot read is answered as before, naming it
		EntityExchangeResult<String> nested = post("ops", client, "{\"limits\": [{\"limit\": 5}]}");
		assertThat(nested.getStatus().value()).isEqualTo(400);
		assertThat(nested.getResponseBody()).contains("\"field\":\"limits\"");
	}

}
