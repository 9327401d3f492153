package io.windowlimiter.gateway;

import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code server.forward-headers-strategy: framework}: Spring's ForwardedHeaderTransformer sets each request's
 * remote address to the leftmost X-Forwarded-For entry (which the client wrote) and removes the header before
 * any filter runs. The test client plays a trusted proxy (loopback is trusted): {@code clientIpKeyResolver}
 * must still walk X-Forwarded-For as the connection brought it, and key by the address the proxy appended.
 * (The server's own handling, {@code native}, which Spring Boot turns on by itself on Kubernetes, is tested
 * through the packaged jar: {@code KubernetesClientIpCases}, run by gateway-app's {@code ClientInputJarIT}.)
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "server.forward-headers-strategy=framework")
@AutoConfigureWebTestClient(timeout = "PT30S")
class ClientIpForwardedHeadersTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		registry.add("window-rate-limiter.trusted-proxies", () -> "127.0.0.0/8, ::1");
		TestRoutes.route(registry, 0, "ip-framework", downstream, "rate-limiter=#{@windowRateLimiter}",
				"key-resolver=#{@clientIpKeyResolver}", "window-rate-limiter.algorithm=fixed-window",
				"window-rate-limiter.limit=5", "window-rate-limiter.window=366d");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private int status(String forwardedFor) {
		return this.client.get().uri("/ip-framework/x").header("X-Forwarded-For", forwardedFor).exchange()
			.returnResult(String.class).getStatus().value();
	}

	@Test
	void theAddressTheTrustedProxyAppendedIsTheKeyNotTheOnesTheClientWrote() {
		// addresses of this run's own: the window outlasts the run
		long run = System.nanoTime();
		String client = "203.0.113." + (run % 250 + 1);
		int passed = 0;
		for (int i = 0; i < 7; i++) {
			passed += (status("6.6.6." + i + ", " + client) == 200) ? 1 : 0;
		}
		assertThat(passed).as("requests of client " + client + " passed, of 7").isEqualTo(5);
		assertThat(status("198.51.100." + (run / 7 % 250 + 1))).as("another client behind the proxy").isEqualTo(200);
	}

}
