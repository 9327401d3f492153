package io.windowlimiter.app.it;

import java.nio.file.Files;
import java.util.Map;

import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * gateway-app's jar started as on a Kubernetes pod: {@code KUBERNETES_SERVICE_HOST} and {@code _PORT} in its
 * environment make Spring Boot detect the platform and, with {@code server.forward-headers-strategy} unset,
 * turn Reactor Netty's own forwarded-header handling on, which reports the leftmost {@code X-Forwarded-For}
 * entry as the request's remote address. The limiter's {@code clientIpKeyResolver} must still key a client by
 * its TCP peer and believe {@code X-Forwarded-For} only from {@code window-rate-limiter.trusted-proxies}
 * (here {@code 127.0.0.1} alone). A client reaching the gateway directly connects from {@code 127.0.0.2};
 * the trusted proxy from {@code 127.0.0.1}. The route is the demo's: 5 requests in any 10 s per client IP.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesClientIpJarIT {

	/** What every Kubernetes pod has in its environment. */
	static final Map<String, String> KUBERNETES = Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1",
			"KUBERNETES_SERVICE_PORT", "443");

	static final String DIRECT_CLIENT = "127.0.0.2";

	static final String TRUSTED_PROXY = "127.0.0.1";

	private static final String ROUTE = "demo-like";

	private RedisProcess redis;

	private JdkDownstream downstream;

	private GatewayJar gateway;

	@BeforeAll
	void start() {
		this.redis = RedisProcess.launch();
		this.downstream = JdkDownstream.start();
		RouteFile routes = new RouteFile(this.downstream.uri());
		routes.route(ROUTE, "clientIpKeyResolver", RouteFile.limit("sliding-log", 5, "10s"));
		this.gateway = GatewayJar.start("kubernetes", this.redis.port(), routes.write(), KUBERNETES,
				"--window-rate-limiter.trusted-proxies=" + TRUSTED_PROXY);
	}

	@AfterAll
	void stop() throws Exception {
		Resources.close(this.gateway, this.downstream, this.redis);
	}

	@Test
	void aClientReachingTheGatewayDirectlyCannotPickItsKeyWithXForwardedFor() throws Exception {
		int passed = 0;
		for (int i = 0; i < 12; i++) {
			int status = FromAddress.get(DIRECT_CLIENT, this.gateway.port(), "/" + ROUTE + "/x",
					Map.of("X-Forwarded-For", "198.51.100." + i));
			assertThat(status).as("request " + i).isIn(200, 429);
			passed += (status == 200) ? 1 : 0;
		}
		assertThat(passed).as("requests passed of 12, each with another X-Forwarded-For, on a route of 5 per 10 s")
			.isEqualTo(5);
	}

	@Test
	void aTrustedProxysForwardedAddressIsStillTheClient() throws Exception {
		int passed = 0;
		for (int i = 0; i < 7; i++) {
			// the client wrote its own entries on the left; the proxy appended the address it saw
			passed += (FromAddress.get(TRUSTED_PROXY, this.gateway.port(), "/" + ROUTE + "/y",
					Map.of("X-Forwarded-For", "6.6.6." + i + ", 203.0.113.7")) == 200) ? 1 : 0;
		}
		assertThat(passed).as("requests of client 203.0.113.7 passed, of 7").isEqualTo(5);
		assertThat(FromAddress.get(TRUSTED_PROXY, this.gateway.port(), "/" + ROUTE + "/y",
				Map.of("X-Forwarded-For", "203.0.113.8"))).as("another client behind the proxy").isEqualTo(200);
	}

	@Test
	void theStartUpLogSaysWhichRuleDecidesTheClientIp() throws Exception {
		assertThat(Files.readString(this.gateway.log())).contains("clientIpKeyResolver keys clients by the TCP peer")
			.contains("cloud platform KUBERNETES");
	}

}
