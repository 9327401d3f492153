package io.windowlimiter.app;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.windowlimiter.gateway.test.DocsSamples;
import io.windowlimiter.gateway.test.DocsSamples.Exchange;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The requests and answers docs/operating.md shows for the {@code ratelimits} endpoint are this application's:
 * it is started in-process as the page starts the demo jar (with {@code config/gateway-plans.yml} and the
 * endpoint exposed on the management port), against a real Redis, and each request of the page's
 * {@code <!-- docs-test: answers -->} blocks is sent in the page's order; each answer must have the page's shape
 * ({@link DocsSamples#assertSameShape}: the same fields at every level, the same values but for those the mark
 * names as varying). Before them, the client the page reads is refused on route {@code orders}, as a client
 * past its burst is, so that the route's {@code topDenied} lists it.
 */
class OperatingDocsAnswersTests {

	private static final String PAGE = "docs/operating.md";

	private static ConfigurableApplicationContext gateway;

	private static final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@BeforeAll
	static void startTheDemoWithThePlansExample() {
		RedisTestServer redis = RedisTestServer.get();
		// what the page's counts start from: a Redis that has seen none of its clients
		redis.template().execute(connection -> connection.serverCommands().flushAll()).blockLast(Duration.ofSeconds(5));
		gateway = new SpringApplicationBuilder(GatewayApplication.class).run("--server.port=0",
				"--spring.config.additional-location=file:" + DocsSamples.ROOT.resolve("config/gateway-plans.yml"),
				"--management.server.port=0", "--management.endpoints.web.exposure.include=health,prometheus,ratelimits",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port());
	}

	@AfterAll
	static void stop() {
		if (gateway != null) {
			gateway.close();
		}
	}

	@Test
	void everyAnswerThePageShowsIsTheEndpointsAnswerToItsRequest() throws Exception {
		refuseAliceOnOrders();
		List<Exchange> exchanges = DocsSamples.exchanges(PAGE);
		assertThat(exchanges).as("the requests of %s", PAGE).hasSizeGreaterThanOrEqualTo(9);
		List<String> wrong = new ArrayList<>();
		for (Exchange exchange : exchanges) {
			HttpResponse<String> answer = send(exchange);
			try {
				DocsSamples.assertSameShape(exchange.toString(), exchange.answer(), answer.body(), exchange.varying());
			}
			catch (AssertionError ex) {
				// every sample that drifted, not only the first
				wrong.add(ex.getMessage());
			}
		}
		assertThat(wrong).as("samples unlike the answers").isEmpty();
	}

	/**
	 * Past the burst of plan free (10 at once, 5 a second) on route orders: refused, and listed in topDenied. The
	 * requests go at once: one after the other on a loaded machine (a request to the unresolvable orders host
	 * taking 200 ms), the bucket refilled as fast as they came and none was refused (a full run with an attack
	 * beside it).
	 */
	private static void refuseAliceOnOrders() {
		int port = Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port"));
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/list"))
			.header("X-API-Key", "alice@example.com")
			.timeout(Duration.ofSeconds(10))
			.build();
		List<CompletableFuture<HttpResponse<Void>>> answers = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			answers.add(client.sendAsync(request, HttpResponse.BodyHandlers.discarding()));
		}
		long refused = answers.stream().map(CompletableFuture::join).filter(answer -> answer.statusCode() == 429).count();
		assertThat(refused).as("alice refused on orders").isPositive();
	}

	private static HttpResponse<String> send(Exchange exchange) throws IOException, InterruptedException {
		String port = gateway.getEnvironment().getProperty("local.management.port");
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + exchange.path()))
			.timeout(Duration.ofSeconds(10));
		if (exchange.body() != null) {
			request.header("Content-Type", "application/json")
				.method(exchange.method(), HttpRequest.BodyPublishers.ofString(exchange.body()));
		}
		else {
			request.method(exchange.method(), HttpRequest.BodyPublishers.noBody());
		}
		return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
