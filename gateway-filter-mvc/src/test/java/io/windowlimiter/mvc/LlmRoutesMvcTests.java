package io.windowlimiter.mvc;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Token budgets of {@code WindowRateLimit} with {@code llm} on a Server MVC gateway (Tomcat), over a real Redis
 * and the fake OpenAI/Anthropic upstream, through HTTP. Each case is a client of its own on the routes
 * {@code llm} (OpenAI) and {@code claude} (Anthropic): 1,000 tokens a day, then 100 requests a day, fixed
 * windows (they roll at midnight UTC: no edge falls inside a test). What Server MVC does of its own (Tomcat's
 * writes, a forward, clients gone mid-stream, a body not read when the client is known refused); a call's estimate
 * and its settle to the usage are {@code WindowRateLimitFilterContract}'s, on both servers. On Server MVC the settle is made before the
 * response completes, so the client's tokens are read right after its answer, without waiting.
 */
@SpringBootTest(classes = MvcTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=health,ratelimits")
@Import(LlmRoutesMvcTests.InAppBackend.class)
class LlmRoutesMvcTests {

	private static final int BUDGET = 1000;

	private static final FakeLlmServer upstream = FakeLlmServer.start();

	private static final Pattern REMAINING = Pattern.compile("\"remaining\":(-?\\d+)");

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		// the test application's Java DSL routes need a downstream; these tests do not call them
		registry.add("test.downstream", upstream::baseUrl);
		// the loaded build machine: a decision Redis answers late must not fail open and over-admit
		registry.add("window-rate-limiter.redis-timeout", () -> "5s");
		registry.add("window-rate-limiter.redis-stall-timeout", () -> "4s");
		route(registry, 0, "llm", "openai", upstream.baseUrl());
		route(registry, 1, "claude", "anthropic", upstream.baseUrl());
		route(registry, 2, "forwarded", "openai", "forward:" + InAppBackend.PATH);
		route(registry, 3, "keyless", "openai", upstream.baseUrl(), "deny-empty-key");
		MvcTestRoutes.register(registry, 4, "few", upstream.baseUrl(), "llm=openai", "max-body-bytes=8192",
				"fail-mode=closed", "limits[0].algorithm=fixed-window", "limits[0].limit=" + BUDGET, "limits[0].window=1d",
				"limits[0].unit=tokens", "limits[1].algorithm=fixed-window", "limits[1].limit=" + FEW,
				"limits[1].window=1d");
	}

	/** The calls a day of route {@code few}, else as {@code llm}. */
	private static final int FEW = 2;

	private static void route(DynamicPropertyRegistry registry, int index, String id, String api, String uri,
			String... allowed) {
		List<String> args = new ArrayList<>(List.of("llm=" + api, "max-body-bytes=8192", "fail-mode=closed",
				"limits[0].algorithm=fixed-window", "limits[0].limit=" + BUDGET, "limits[0].window=1d",
				"limits[0].unit=tokens", "limits[1].algorithm=fixed-window", "limits[1].limit=100",
				"limits[1].window=1d"));
		for (String deny : allowed) {
			args.add(deny + "=false");
		}
		MvcTestRoutes.register(registry, index, id, uri, args.toArray(String[]::new));
	}

	/** A chat completions backend inside the gateway, reached through a forward: it reports the body it got. */
	@Configuration(proxyBeanMethods = false)
	static class InAppBackend {

		static final String PATH = "/in-app-llm/v1/chat/completions";

		@Bean
		RouterFunction<ServerResponse> inAppLlm() {
			return RouterFunctions.route(RequestPredicates.POST(PATH), request -> {
				int received = request.servletRequest().getInputStream().readAllBytes().length;
				return ServerResponse.ok()
					.contentType(MediaType.APPLICATION_JSON)
					.body("{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
							+ "\"assistant\",\"content\":\"hi\"}}],\"usage\":{\"prompt_tokens\":" + received
							+ ",\"completion_tokens\":10,\"total_tokens\":" + (received + 10) + "}}");
			});
		}

	}

	@AfterAll
	static void stop() {
		upstream.close();
	}


	private HttpRequest.Builder post(String path, String client, String body) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("X-API-Key", client)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
	}

	/** What the client has left of the route's token limit (its first), through the ratelimits endpoint. */
	private long tokensLeft(String route, String client) throws Exception {
		HttpResponse<String> standing = this.http.send(
				HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/ratelimits/" + route + "/"
						+ client)).timeout(Duration.ofSeconds(10)).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(standing.statusCode()).as(standing.body()).isEqualTo(200);
		String limits = standing.body().substring(standing.body().indexOf("\"limits\""));
		Matcher remaining = REMAINING.matcher(limits);
		assertThat(remaining.find()).as(standing.body()).isTrue();
		return Long.parseLong(remaining.group(1));
	}

	/** As on a route without llm: with deny-empty-key: false, keyless calls share one key and its token budget. */
	@Test
	void keylessCallsShareOneKeyAndItsTokenBudget() throws Exception {
		HttpRequest.Builder keyless = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port
				+ "/keyless/v1/chat/completions"))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.header(FakeLlmServer.HEADER_USAGE, "120,30")
			.POST(HttpRequest.BodyPublishers.ofString(FakeLlmServer.chat(300, false)));
		HttpResponse<String> response = this.http.send(keyless.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		assertThat(response.headers().firstValue("X-RateLimit-Remaining-Tokens")).hasValue("700");
		assertThat(tokensLeft("keyless", "____EMPTY_KEY__")).isEqualTo(BUDGET - 150);
		HttpResponse<String> next = this.http.send(keyless.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(next.headers().firstValue("X-RateLimit-Remaining-Tokens")).as("1,000 - 150 used - 300 reserved")
			.hasValue("550");
	}

	/**
	 * The client has its answer only once the call is settled: read right after each answer, the client's standing
	 * is already the usage, never the reservation. With the upstream's Content-Length kept, Tomcat sent the last
	 * byte (and the client had the whole answer) before the settle ran: a read right after found the reservation.
	 */
	@Test
	void aJsonAnswerReachesItsClientOnlyOnceSettled() throws Exception {
		for (int call = 0; call < 20; call++) {
			String client = UUID.randomUUID().toString();
			HttpResponse<String> response = this.http.send(post("/llm/v1/chat/completions", client, FakeLlmServer.chat(300, false))
				.header(FakeLlmServer.HEADER_USAGE, "120,30")
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
			assertThat(tokensLeft("llm", client)).as("call %d read right after its answer", call).isEqualTo(BUDGET - 150);
		}
	}

	/** A forward: route's dispatch gets the body the filter read (the servlet request's own stream is spent). */
	@Test
	void aForwardRouteHandsOnTheBodyAndSettlesToItsUsage() throws Exception {
		String client = UUID.randomUUID().toString();
		String body = FakeLlmServer.chat(300, false);
		HttpResponse<String> response = this.http.send(post("/forwarded/v1/chat/completions", client, body).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		assertThat(response.body()).contains("\"prompt_tokens\":" + body.length() + ",");
		assertThat(tokensLeft("forwarded", client)).isEqualTo(BUDGET - body.length() - 10);
	}

	@Test
	void aStreamGetsIncludeUsageAddedAndTheClientThatDidNotAskDoesNotSeeTheUsageChunk() throws Exception {
		String client = UUID.randomUUID().toString();
		String body = FakeLlmServer.chat(300, true);
		HttpResponse<String> response = this.http.send(post("/llm/v1/chat/completions", client, body)
			.header(FakeLlmServer.HEADER_USAGE, "25,75")
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(upstream.lastReceived().asksIncludeUsage()).as("asked upstream").isTrue();
		assertThat(upstream.lastReceived().bodyText()).as("the client's body, include_usage added")
			.endsWith(body.substring(1)).contains("\"include_usage\":true");
		assertThat(response.body()).contains("data: [DONE]", "Héllo").doesNotContain("prompt_tokens", "\"choices\":[]");
		assertThat(response.headers().firstValue("Content-Length")).isEmpty();
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET - 100);
		// a client that asked gets the chunk
		String asking = body.replace("\"stream\":true", "\"stream\":true,\"stream_options\":{\"include_usage\":true}");
		HttpResponse<String> asked = this.http.send(post("/llm/v1/chat/completions", client, asking)
			.header(FakeLlmServer.HEADER_USAGE, "25,75")
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(asked.body()).contains("\"choices\":[],\"usage\":{\"prompt_tokens\":25");
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET - 200);
	}

	@Test
	void tenConcurrentSlowStreamsOf300TokensInABudgetOf1000AdmitAtMostThree() throws Exception {
		String client = UUID.randomUUID().toString();
		List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			calls.add(this.http.sendAsync(post("/llm/v1/chat/completions", client, FakeLlmServer.chat(300, true))
				.header(FakeLlmServer.HEADER_DELAY_MS, "600")
				// each uses what it reserved: no settle frees room, so the count does not depend on timing
				.header(FakeLlmServer.HEADER_USAGE, "100,200")
				.build(), HttpResponse.BodyHandlers.ofString()));
		}
		int admitted = 0;
		int refused = 0;
		for (CompletableFuture<HttpResponse<String>> call : calls) {
			HttpResponse<String> response = call.get();
			admitted += (response.statusCode() == 200) ? 1 : 0;
			refused += (response.statusCode() == 429) ? 1 : 0;
		}
		// 3 x 300 fit in 1,000, a fourth does not (fewer only when Redis timed out a decision: refused, closed)
		assertThat(admitted).isBetween(1, 3);
		assertThat(admitted + refused).isEqualTo(10);
		assertThat(tokensLeft("llm", client)).as("each settled to its usage, 300").isEqualTo(BUDGET - admitted * 300L);
	}

	@Test
	void theFirstByteOfASlowStreamReachesTheClientBeforeTheUpstreamEnds() throws Exception {
		String client = UUID.randomUUID().toString();
		long sent = System.nanoTime();
		HttpResponse<InputStream> response = this.http.send(post("/llm/v1/chat/completions", client, FakeLlmServer.chat(300, true))
			.header(FakeLlmServer.HEADER_DELAY_MS, "700")
			.header(FakeLlmServer.HEADER_DELTAS, "4")
			.build(), HttpResponse.BodyHandlers.ofInputStream());
		try (InputStream in = response.body()) {
			assertThat(in.read()).isPositive();
			long first = System.nanoTime();
			in.readAllBytes();
			long end = System.nanoTime();
			// 7 events, 700 ms apart after the first: the upstream needs 4.2 s; the first came long before the end
			assertThat(Duration.ofNanos(end - first)).as("first byte %s ms after sending",
					Duration.ofNanos(first - sent).toMillis()).isGreaterThan(Duration.ofSeconds(3));
		}
	}

	@Test
	void anAnswerWithoutUsageIsChargedTheReservationAndCounted() throws Exception {
		String client = UUID.randomUUID().toString();
		double before = missing();
		HttpResponse<String> response = this.http.send(post("/llm/v1/chat/completions", client, FakeLlmServer.chat(300, false))
			.header(FakeLlmServer.HEADER_NO_USAGE, "true")
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET - 300);
		assertThat(missing()).isEqualTo(before + 1);
	}

	private double missing() {
		Counter counter = this.meters.find("gateway.ratelimit.llm.usage.missing").tag("route", "llm").counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void aStreamTheUpstreamCutsIsChargedAtLeastItsReservation() throws Exception {
		String client = UUID.randomUUID().toString();
		try {
			this.http.send(post("/llm/v1/chat/completions", client, FakeLlmServer.chat(300, true))
				.header(FakeLlmServer.HEADER_CUT_AFTER, "3")
				.header(FakeLlmServer.HEADER_USAGE, "10,20")
				.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (java.io.IOException ex) {
			// the gateway cannot end a body the upstream cut: the client sees it cut too
		}
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET - 300);
	}

	@Test
	void aClientThatHangsUpMidStreamIsChargedTheLargerOfItsReservationAndWhatWasSeen() throws Exception {
		String client = UUID.randomUUID().toString();
		String body = FakeLlmServer.chat(300, true);
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /llm/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + client
					+ "\r\nContent-Type: application/json\r\n" + FakeLlmServer.HEADER_DELAY_MS + ": 500\r\n"
					+ FakeLlmServer.HEADER_USAGE + ": 10,20\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
				.getBytes(StandardCharsets.UTF_8));
			out.flush();
			assertThat(socket.getInputStream().read()).as("the answer started").isPositive();
		}
		// the upstream would report 30 at its end; the client left first: charged the reservation, once the
		// gateway's next write fails (the next event, 500 ms on)
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (tokensLeft("llm", client) != BUDGET - 300 && System.nanoTime() < deadline) {
			Thread.sleep(50);
		}
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET - 300);
		// and it stays so when the stream would have ended
		Thread.sleep(3_000);
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET - 300);
	}

	@Test
	void aClientThatHangsUpAfterMoreThanItsReservationStreamedIsChargedWhatWasSeen() throws Exception {
		String client = UUID.randomUUID().toString();
		String body = FakeLlmServer.chat(300, true);
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			// 400 chunks of about 230 bytes, each with about 9 bytes of text, 5 ms apart
			out.write(("POST /llm/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + client
					+ "\r\nContent-Type: application/json\r\n" + FakeLlmServer.HEADER_DELAY_MS + ": 5\r\n"
					+ FakeLlmServer.HEADER_DELTAS + ": 400\r\n" + FakeLlmServer.HEADER_USAGE + ": 10,20\r\n"
					+ "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[8192];
			int read = 0;
			while (read < 50_000) {
				int n = in.read(buffer);
				assertThat(n).as("the stream ended before the client hung up").isPositive();
				read += n;
			}
		}
		// over 1,800 bytes of text seen: 450 tokens or more at 4 bytes a token, above the 300 reserved
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (tokensLeft("llm", client) == BUDGET - 300 && System.nanoTime() < deadline) {
			Thread.sleep(50);
		}
		assertThat(tokensLeft("llm", client)).as("charged what was seen").isLessThanOrEqualTo(BUDGET - 400);
	}

	/**
	 * Issue 44 item 2 on Server MVC: a second {@code stream_options} that switches the usage off (the upstream keeps
	 * the last duplicate) is refused naming the field, before anything is reserved or sent; the honest client's
	 * calls are charged their usage.
	 */
	@Test
	void aSecondStreamOptionsThatSwitchesTheUsageOffIsRefusedNamingItBeforeAnythingIsReservedOrSent() throws Exception {
		String head = "{\"model\":\"gpt-fake\",\"stream\":true,\"stream_options\":{\"include_usage\":true},";
		String tail = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":5}";
		String honest = UUID.randomUUID().toString();
		for (int call = 0; call < 3; call++) {
			HttpResponse<String> response = this.http.send(post("/llm/v1/chat/completions", honest, head + tail)
				.header(FakeLlmServer.HEADER_USAGE, "100,150")
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		}
		long honestCharged = BUDGET - tokensLeft("llm", honest);
		assertThat(honestCharged).as("three calls of 250 tokens each").isEqualTo(750);
		String cheater = UUID.randomUUID().toString();
		String twice = head + "\"stream_options\":{\"include_usage\":false}," + tail;
		int sentBefore = upstream.received().size();
		List<HttpResponse<String>> answers = new ArrayList<>();
		for (int call = 0; call < 3; call++) {
			answers.add(this.http.send(post("/llm/v1/chat/completions", cheater, twice)
				.header(FakeLlmServer.HEADER_USAGE, "100,150")
				.build(), HttpResponse.BodyHandlers.ofString()));
		}
		long cheaterCharged = BUDGET - tokensLeft("llm", cheater);
		assertThat(answers).as("three calls of 250 tokens each charged %d in all; the honest client's, %d",
				cheaterCharged, honestCharged).allSatisfy(answer -> {
					assertThat(answer.statusCode()).isEqualTo(400);
					assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/json");
					assertThat(answer.body()).contains("\"type\":\"invalid_request_error\"", "\"param\":\"stream_options\"");
				});
		assertThat(upstream.received()).as("sent upstream").hasSize(sentBefore);
		assertThat(cheaterCharged).isZero();
	}

	/** Keys are read as JSON decodes them: an escaped {@code stream} is a stream, an escaped {@code stream_options} is it. */
	@Test
	void escapedKeysAreReadAsTheUpstreamReadsThem() throws Exception {
		String client = UUID.randomUUID().toString();
		String escapedStream = "{\"model\":\"gpt-fake\",\"str\\u0065am\":true,"
				+ "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":5}";
		HttpResponse<String> response = this.http.send(post("/llm/v1/chat/completions", client, escapedStream)
			.header(FakeLlmServer.HEADER_USAGE, "25,75")
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		assertThat(upstream.lastReceived().asksStream()).isTrue();
		assertThat(upstream.lastReceived().asksIncludeUsage()).as("asked upstream: %s",
				upstream.lastReceived().bodyText()).isTrue();
		assertThat(response.body()).contains("data: [DONE]").doesNotContain("prompt_tokens");
		assertThat(tokensLeft("llm", client)).as("settled to its usage").isEqualTo(BUDGET - 100);
		String other = UUID.randomUUID().toString();
		String escapedOptions = "{\"model\":\"gpt-fake\",\"stream\":true,\"stream_opti\\u006fns\":{\"include_usage\":false},"
				+ "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":5}";
		HttpResponse<String> options = this.http.send(post("/llm/v1/chat/completions", other, escapedOptions)
			.header(FakeLlmServer.HEADER_USAGE, "25,75")
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(options.statusCode()).as(options.body()).isEqualTo(200);
		assertThat(upstream.lastReceived().asksIncludeUsage()).as("asked upstream: %s",
				upstream.lastReceived().bodyText()).isTrue();
		assertThat(tokensLeft("llm", other)).as("settled to its usage").isEqualTo(BUDGET - 100);
	}

	/** {@code n} choices may each use {@code max_tokens}: the estimate reserves n times the output. */
	@Test
	void nChoicesReserveNTimesTheOutput() throws Exception {
		String client = UUID.randomUUID().toString();
		String body = "{\"model\":\"gpt-fake\",\"n\":4,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
				+ "\"max_tokens\":50}";
		HttpResponse<String> response = this.http.send(post("/llm/v1/chat/completions", client, body)
			.header(FakeLlmServer.HEADER_USAGE, "10,20")
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		long estimate = (body.length() + 1) / 2 + 4 * 50;
		assertThat(response.headers().firstValue("X-RateLimit-Remaining-Tokens")).hasValue(Long.toString(BUDGET - estimate));
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET - 30);
	}

	/** A count the upstream would read otherwise than the estimate (a string, a fraction, zero choices): a 400 naming it. */
	@Test
	void aCountThatIsNotAWholeNumberIsA400NamingItBeforeAnythingIsReservedOrSent() throws Exception {
		String client = UUID.randomUUID().toString();
		int sentBefore = upstream.received().size();
		String[][] bodies = { { "max_tokens", "{\"messages\":[],\"max_tokens\":\"1000\"}" },
				{ "max_tokens", "{\"messages\":[],\"max_tokens\":1e3}" }, { "n", "{\"messages\":[],\"n\":0}" } };
		for (String[] body : bodies) {
			HttpResponse<String> response = this.http.send(post("/llm/v1/chat/completions", client, body[1]).build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as(body[1] + ": " + response.body()).isEqualTo(400);
			assertThat(response.body()).contains("\"param\":\"" + body[0] + "\"");
		}
		assertThat(upstream.received()).as("sent upstream").hasSize(sentBefore);
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET);
	}

	/**
	 * A client this instance knows is refused (its calls of the day used up: Redis refused its last call, and the
	 * deny cache remembers) is answered 429 before its body is read: here a body that never ends. Before, the
	 * filter read the whole body (up to max-body-bytes) on the request's thread first, for clients already refused
	 * too: this call waited for bytes that never came.
	 */
	@Test
	void aClientKnownRefusedIsAnsweredBeforeItsBodyIsRead() throws Exception {
		String client = UUID.randomUUID().toString();
		for (int i = 0; i < FEW; i++) {
			HttpResponse<String> passed = this.http.send(post("/few/v1/chat/completions", client, FakeLlmServer.chat(300, false))
				.header(FakeLlmServer.HEADER_USAGE, "10,10")
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(passed.statusCode()).as(passed.body()).isEqualTo(200);
		}
		HttpResponse<String> refused = this.http.send(post("/few/v1/chat/completions", client, FakeLlmServer.chat(300, false)).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(refused.statusCode()).as("refused by Redis: the calls of the day").isEqualTo(429);
		int received = upstream.received().size();
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5_000);
			socket.setSoTimeout(5_000);
			OutputStream out = socket.getOutputStream();
			// 4,000 bytes announced, 100 sent, the rest never
			out.write(("POST /few/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + client
					+ "\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{\"model\":\"gpt-fake\","
					+ "\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(60)).getBytes(StandardCharsets.UTF_8));
			out.flush();
			long sent = System.nanoTime();
			String status = statusLine(socket.getInputStream());
			Duration waited = Duration.ofNanos(System.nanoTime() - sent);
			assertThat(status).startsWith("HTTP/1.1 429");
			assertThat(waited).as("answered without waiting for the body").isLessThan(Duration.ofSeconds(2));
		}
		assertThat(upstream.received()).as("nothing went upstream").hasSize(received);
	}

	/** The first line of an HTTP answer, read byte by byte (nothing of the rest is read). */
	private static String statusLine(InputStream in) throws java.io.IOException {
		StringBuilder line = new StringBuilder();
		for (int b = in.read(); b >= 0 && b != '\n'; b = in.read()) {
			line.append((char) b);
		}
		return line.toString().trim();
	}

	@Test
	void aBodyAboveTheLimitIsA413NamingItBeforeAnyQuotaIsUsed() throws Exception {
		String client = UUID.randomUUID().toString();
		String big = "{\"model\":\"gpt-fake\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(9000) + "\"}]}";
		HttpResponse<String> response = this.http.send(post("/llm/v1/chat/completions", client, big).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(response.body()).contains("max-body-bytes", "8192");
		assertThat(tokensLeft("llm", client)).isEqualTo(BUDGET);
	}

}
