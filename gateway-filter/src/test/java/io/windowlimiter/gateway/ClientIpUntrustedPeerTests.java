package io.windowlimiter.gateway;

import java.util.List;

import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.RedisTestServer;
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
 * Issue 11: a client that reaches the gateway directly and sends a new X-Forwarded-For on each request
 * must not get a fresh quota each time. Trusted proxies are configured, but the test client's loopback
 * address is not among them, so the gateway must key by the TCP peer. Real gateway, Redis and downstream.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class ClientIpUntrustedPeerTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		registry.add("window-rate-limiter.trusted-proxies", () -> "10.0.0.0/8, 2001:db8::/32");
		TestRoutes.route(registry, 0, "ip-untrusted", downstream, "rate-limiter=#{@windowRateLimiter}",
				"key-resolver=#{@clientIpKeyResolver}", "window-rate-limiter.algorithm=fixed-window",
				"window-rate-limiter.limit=5", "window-rate-limiter.window=366d");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	@Test
	void aNewXForwardedForOnEachRequestGetsNoFreshQuota() {
		String path = "/ip-untrusted/spoofed";
		int allowed = 0;
		int denied = 0;
		for (int i = 0; i < 8; i++) {
			// a different made-up client each time, one of them inside the trusted range
			String spoofed = (i == 7) ? "10.0.0.1" : "198.51.100." + i;
			int status = this.client.get().uri(path).header("X-Forwarded-For", spoofed).exchange()
				.returnResult(String.class).getStatus().value();
			allowed += (status == 200) ? 1 : 0;
			denied += (status == 429) ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(5);
		assertThat(denied).isEqualTo(3);
		assertThat(downstream.hits(path, "-")).isEqualTo(5);
		// every request was counted under one key: the loopback peer's
		List<String> keys = RedisTestServer.get().template().keys("wrl:{*}:ip-untrusted:*").collectList().block();
		assertThat(keys).hasSize(1);
		assertThat(keys.get(0)).isIn("wrl:{127.0.0.1}:ip-untrusted:fl", "wrl:{::1}:ip-untrusted:fl");
	}

}
