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
 * gateway-app-mvc's jar started as on a Kubernetes pod ({@link KubernetesClientIpJarIT#KUBERNETES}): Spring Boot
 * then adds Tomcat's RemoteIpValve, which trusts loopback and private ranges as proxies and replaces the
 * servlet request's remote address by what {@code X-Forwarded-For} says. The limiter's
 * {@code clientIpKeyResolver} must still key a client by its TCP peer and believe {@code X-Forwarded-For}
 * only from {@code window-rate-limiter.trusted-proxies} ({@code 127.0.0.1} alone): the same cases as on
 * WebFlux, a direct client from {@code 127.0.0.2}, the trusted proxy from {@code 127.0.0.1}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MvcKubernetesClientIpJarIT {

	private static final String ROUTE = "demo-like";

	private RedisProcess redis;

	private JdkDownstream downstream;

	private GatewayJar gateway;

	@BeforeAll
	void start() {
		this.redis = RedisProcess.launch();
		this.downstream = JdkDownstream.start();
		MvcRouteFile routes = new MvcRouteFile(this.downstream.uri());
		routes.route(ROUTE, this.downstream.uri(), "clientIpKeyResolver", RouteFile.limit("sliding-log", 5, "10s"));
		this.gateway = GatewayJar.start("mvc-kubernetes", this.redis.port(), routes.write(),
				KubernetesClientIpJarIT.KUBERNETES,
				"--window-rate-limiter.trusted-proxies=" + KubernetesClientIpJarIT.TRUSTED_PROXY);
	}

	@AfterAll
	void stop() throws Exception {
		Resources.close(this.gateway, this.downstream, this.redis);
	}

	@Test
	void aClientReachingTheGatewayDirectlyCannotPickItsKeyWithXForwardedFor() throws Exception {
		int passed = 0;
		for (int i = 0; i < 12; i++) {
			int status = FromAddress.get(KubernetesClientIpJarIT.DIRECT_CLIENT, this.gateway.port(), "/" + ROUTE + "/x",
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
			passed += (FromAddress.get(KubernetesClientIpJarIT.TRUSTED_PROXY, this.gateway.port(), "/" + ROUTE + "/y",
					Map.of("X-Forwarded-For", "6.6.6." + i + ", 203.0.113.7")) == 200) ? 1 : 0;
		}
		assertThat(passed).as("requests of client 203.0.113.7 passed, of 7").isEqualTo(5);
		assertThat(FromAddress.get(KubernetesClientIpJarIT.TRUSTED_PROXY, this.gateway.port(), "/" + ROUTE + "/y",
				Map.of("X-Forwarded-For", "203.0.113.8"))).as("another client behind the proxy").isEqualTo(200);
	}

	@Test
	void theStartUpLogSaysWhichRuleDecidesTheClientIp() throws Exception {
		assertThat(Files.readString(this.gateway.log())).contains("clientIpKeyResolver keys clients by the TCP peer")
			.contains("cloud platform KUBERNETES");
	}

}
