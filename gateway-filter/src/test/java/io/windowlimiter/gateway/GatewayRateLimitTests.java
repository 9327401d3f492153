package io.windowlimiter.gateway;

import java.util.UUID;

import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole path, through the gateway's own {@code RequestRateLimiter} filter, a real Redis and a real
 * downstream HTTP server. Each test uses API keys of its own. Windows are 366 days long, so no
 * window edge falls inside a test.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class GatewayRateLimitTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		String[][] routes = { { "fixed", "fixed-window", "#{@headerKeyResolver}" },
				{ "log", "sliding-log", "#{@headerKeyResolver}" },
				{ "counter", "sliding-window-counter", "#{@headerKeyResolver}" },
				{ "ip", "fixed-window", "#{@clientIpKeyResolver}" } };
		for (int i = 0; i < routes.length; i++) {
			TestRoutes.route(registry, i, routes[i][0], downstream, "rate-limiter=#{@windowRateLimiter}",
					"key-resolver=" + routes[i][2], "window-rate-limiter.algorithm=" + routes[i][1],
					"window-rate-limiter.limit=3", "window-rate-limiter.window=366d");
		}
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private EntityExchangeResult<String> get(String path, String apiKey) {
		WebTestClient.RequestHeadersSpec<?> request = this.client.get().uri(path);
		if (apiKey != null) {
			request = request.header("X-API-Key", apiKey);
		}
		return request.exchange().expectBody(String.class).returnResult();
	}

	@ParameterizedTest
	@ValueSource(strings = { "fixed", "log", "counter" })
	void theLimitHoldsAndDeniedRequestsNeverReachDownstream(String route) {
		String apiKey = UUID.randomUUID().toString();
		String path = "/" + route + "/items";
		for (int i = 1; i <= 3; i++) {
			EntityExchangeResult<String> allowed = get(path, apiKey);
			assertThat(allowed.getStatus().value()).isEqualTo(200);
			assertThat(allowed.getResponseBody()).isEqualTo("downstream");
			HttpHeaders headers = allowed.getResponseHeaders();
			assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("3");
			assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
			assertThat(Long.parseLong(headers.getFirst("X-RateLimit-Reset"))).isPositive();
			assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"" + route + "\";q=3;w=31622400");
			assertThat(headers.getFirst("RateLimit")).startsWith("\"" + route + "\";r=" + (3 - i) + ";t=");
			assertThat(headers.containsHeader("Retry-After")).isFalse();
		}
		for (int i = 0; i < 5; i++) {
			EntityExchangeResult<String> denied = get(path, apiKey);
			assertThat(denied.getStatus().value()).isEqualTo(429);
			HttpHeaders headers = denied.getResponseHeaders();
			assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
			assertThat(Long.parseLong(headers.getFirst("Retry-After"))).isGreaterThanOrEqualTo(1);
			assertThat(headers.getFirst("RateLimit")).startsWith("\"" + route + "\";r=0;t=");
		}
		assertThat(downstream.hits(path, apiKey)).isEqualTo(3);
	}

	@Test
	void aRequestWithoutAKeyIsRefusedWith403AndNeverReachesDownstream() {
		int before = downstream.total();
		assertThat(get("/fixed/items", null).getStatus().value()).isEqualTo(403);
		assertThat(downstream.total()).isEqualTo(before);
	}

	@Test
	void routesDoNotShareQuota() {
		String apiKey = UUID.randomUUID().toString();
		for (int i = 0; i < 4; i++) {
			get("/fixed/items", apiKey);
		}
		assertThat(get("/fixed/items", apiKey).getStatus().value()).isEqualTo(429);
		assertThat(get("/log/items", apiKey).getStatus().value()).isEqualTo(200);
	}

	@Test
	void clientsDoNotShareQuota() {
		String alice = UUID.randomUUID().toString();
		for (int i = 0; i < 4; i++) {
			get("/counter/items", alice);
		}
		assertThat(get("/counter/items", alice).getStatus().value()).isEqualTo(429);
		assertThat(get("/counter/items", UUID.randomUUID().toString()).getStatus().value()).isEqualTo(200);
	}

	@Test
	void hostileKeysAreLimitedLikeAnyOtherAndNeverCauseA5xx() {
		String unique = UUID.randomUUID().toString();
		String[] hostile = { "{" + unique + "}", unique + "}{", "x".repeat(4000) + unique, unique + " %0d%0a SET",
				unique + ":colon", "caf\u00e9-" + unique };
		for (String apiKey : hostile) {
			for (int i = 1; i <= 3; i++) {
				assertThat(get("/fixed/items", apiKey).getStatus().value()).as(apiKey).isEqualTo(200);
			}
			assertThat(get("/fixed/items", apiKey).getStatus().value()).as(apiKey).isEqualTo(429);
		}
	}

	@Test
	void anEightKilobyteKeyNeverCausesA5xx() {
		// the server may refuse the header as too large (431); it must not fail on it
		int status = get("/fixed/items", "k".repeat(8 * 1024)).getStatus().value();
		assertThat(status).isIn(200, 431);
	}

	@Test
	void theClientIpResolverLimitsByPeerAddress() {
		// every request of this test comes from 127.0.0.1; a spoofed X-Forwarded-For changes nothing
		// (no trusted proxies are configured)
		int allowed = 0;
		for (int i = 0; i < 6; i++) {
			int status = this.client.get()
				.uri("/ip/items")
				.header("X-Forwarded-For", "198.51.100." + i)
				.exchange()
				.returnResult(String.class)
				.getStatus()
				.value();
			allowed += (status == 200) ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(3);
	}

}
