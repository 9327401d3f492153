package io.windowlimiter.app.it;

import java.nio.file.Files;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client's IP on a Kubernetes pod, on a jar started with {@link #KUBERNETES} in its environment,
 * {@link #TRUSTED_PROXIES} among its arguments and route {@value #ROUTE} keyed by {@code clientIpKeyResolver}, 5
 * requests in any 10 s per client IP (the demo's). A client reaching the gateway directly connects from
 * {@value #DIRECT_CLIENT}; the trusted proxy from {@value #TRUSTED_PROXY}. What each server adds on such a pod:
 * <ul>
 * <li>WebFlux: {@code KUBERNETES_SERVICE_HOST} and {@code _PORT} make Spring Boot detect the platform and, with
 * {@code server.forward-headers-strategy} unset, turn Reactor Netty's own forwarded-header handling on, which
 * reports the leftmost {@code X-Forwarded-For} entry as the request's remote address;</li>
 * <li>Server MVC: Spring Boot then adds Tomcat's RemoteIpValve, which trusts loopback and private ranges as proxies
 * and replaces the servlet request's remote address by what {@code X-Forwarded-For} says.</li>
 * </ul>
 * The limiter's {@code clientIpKeyResolver} must still key a client by its TCP peer and believe
 * {@code X-Forwarded-For} only from {@code window-rate-limiter.trusted-proxies} ({@value #TRUSTED_PROXY} alone).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class KubernetesClientIpCases {

	/** What every Kubernetes pod has in its environment. */
	static final Map<String, String> KUBERNETES = Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1",
			"KUBERNETES_SERVICE_PORT", "443");

	static final String DIRECT_CLIENT = "127.0.0.2";

	static final String TRUSTED_PROXY = "127.0.0.1";

	/** The jar's argument that trusts {@link #TRUSTED_PROXY} alone. */
	static final String TRUSTED_PROXIES = "--window-rate-limiter.trusted-proxies=" + TRUSTED_PROXY;

	static final String ROUTE = "demo-like";

	private final GatewayJar gateway;

	KubernetesClientIpCases(GatewayJar gateway) {
		this.gateway = gateway;
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
