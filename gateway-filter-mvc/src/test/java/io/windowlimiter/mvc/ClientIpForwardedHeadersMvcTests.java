package io.windowlimiter.mvc;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import io.windowlimiter.gateway.test.CountingDownstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code server.forward-headers-strategy: framework} on Server MVC: Spring's ForwardedHeaderFilter sets the
 * servlet request's remote address to the leftmost X-Forwarded-For entry (which the client wrote) and hides
 * the header from the filters after it. The test client plays a trusted proxy (loopback is trusted):
 * {@code clientIpKeyResolver} must still walk X-Forwarded-For as the connection brought it (Tomcat's
 * {@code TcpPeerValve} hands it over) and key by the address the proxy appended. (Tomcat's RemoteIpValve,
 * which Spring Boot adds by itself on Kubernetes, is tested through the packaged jar.)
 */
@SpringBootTest(classes = MvcTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "server.forward-headers-strategy=framework")
class ClientIpForwardedHeadersMvcTests {

	private static final CountingDownstream downstream = new CountingDownstream();

	private static final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("test.downstream", downstream::uri);
		registry.add("window-rate-limiter.trusted-proxies", () -> "127.0.0.0/8, ::1");
		MvcTestRoutes.register(registry, 0, "ip-framework", downstream.uri(), "key-resolver=clientIpKeyResolver",
				"algorithm=fixed-window", "limit=5", "window=366d");
	}

	@AfterAll
	static void stop() {
		downstream.close();
	}

	private int status(String forwardedFor) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/ip-framework/x"))
			.header("X-Forwarded-For", forwardedFor)
			.build();
		return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	@Test
	void theAddressTheTrustedProxyAppendedIsTheKeyNotTheOnesTheClientWrote() throws Exception {
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
