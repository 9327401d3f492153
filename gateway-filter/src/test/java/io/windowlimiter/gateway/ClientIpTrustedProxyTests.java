package io.windowlimiter.gateway;

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
 * The test client plays a trusted load balancer: loopback is configured as a trusted proxy, so the
 * address it forwards is the client's key. Real gateway, Redis and downstream; each test uses client
 * addresses and a path of its own.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class ClientIpTrustedProxyTests {

	static final Downstream downstream = Downstream.start();

	@Autowired
	private WebTestClient client;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		registry.add("window-rate-limiter.trusted-proxies", () -> "127.0.0.0/8, ::1");
		TestRoutes.route(registry, 0, "ip-trusted", downstream, "rate-limiter=#{@windowRateLimiter}",
				"key-resolver=#{@clientIpKeyResolver}", "window-rate-limiter.algorithm=fixed-window",
				"window-rate-limiter.limit=5", "window-rate-limiter.window=366d");
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	private int status(String path, String forwardedFor) {
		return this.client.get().uri(path).header("X-Forwarded-For", forwardedFor).exchange()
			.returnResult(String.class).getStatus().value();
	}

	private static boolean redisHasKey(String clientKey) {
		return RedisTestServer.get().template().hasKey("wrl:{" + clientKey + "}:ip-trusted:fl").block();
	}

	@Test
	void theForwardedAddressIsTheKey() {
		String path = "/ip-trusted/forwarded";
		for (int i = 0; i < 5; i++) {
			assertThat(status(path, "203.0.113.10")).isEqualTo(200);
		}
		assertThat(status(path, "203.0.113.10")).isEqualTo(429);
		assertThat(status(path, "203.0.113.11")).as("another client").isEqualTo(200);
		assertThat(downstream.hits(path, "-")).isEqualTo(6);
		assertThat(redisHasKey("203.0.113.10")).isTrue();
		assertThat(redisHasKey("203.0.113.11")).isTrue();
	}

	@Test
	void entriesLeftOfTheFirstUntrustedAddressAreTheClientsOwnAndIgnored() {
		// 203.0.113.20 reached the trusted proxy; what it wrote to the left of that changes nothing
		String path = "/ip-trusted/spoofed";
		int allowed = 0;
		for (int i = 0; i < 8; i++) {
			allowed += (status(path, "198.51.100." + i + ", 203.0.113.20") == 200) ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(5);
		assertThat(downstream.hits(path, "-")).isEqualTo(5);
	}

	@Test
	void anIpv6ClientIsKeyedByItsSlash64() {
		String path = "/ip-trusted/ipv6";
		int allowed = 0;
		for (int i = 1; i <= 8; i++) {
			allowed += (status(path, "2001:db8:1:2::" + Integer.toHexString(i)) == 200) ? 1 : 0;
		}
		assertThat(allowed).as("eight addresses of one /64 share one quota").isEqualTo(5);
		assertThat(status(path, "2001:0db8:0001:0003:0000:0000:0000:0001")).as("the next /64").isEqualTo(200);
		assertThat(redisHasKey("2001:db8:1:2::/64")).isTrue();
		assertThat(redisHasKey("2001:db8:1:3::/64")).isTrue();
	}

}
