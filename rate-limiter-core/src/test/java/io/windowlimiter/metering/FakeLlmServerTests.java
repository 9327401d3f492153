package io.windowlimiter.metering;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.FakeLlmServer.Reply;
import io.windowlimiter.metering.Usage.Outcome;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.windowlimiter.metering.LlmPayloads.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIOException;

/** The fake upstream, read over HTTP by the meter as a gateway would: usage, slow streams, errors, cuts. */
@Timeout(20)
class FakeLlmServerTests {

	private static final String CHAT_STREAM = "{\"model\":\"gpt-4.1\",\"stream\":true,"
			+ "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

	private static FakeLlmServer fake;

	private final HttpClient client = HttpClient.newHttpClient();

	@BeforeAll
	static void start() {
		fake = FakeLlmServer.start();
	}

	@AfterAll
	static void stop() {
		fake.close();
	}

	@BeforeEach
	void reset() {
		fake.reply(Reply.DEFAULT);
		fake.clearReceived();
	}

	@Test
	void answersEachApiAsJsonWithTheUsageChosen() throws Exception {
		fake.reply(Reply.usage(120, 30).withCache(7, 9));
		// OpenAI's cached tokens are the cache reads, a part of its input
		assertThat(meter("/v1/chat/completions", "{\"model\":\"gpt-4.1\",\"messages\":[]}").usage())
			.isEqualTo(new Usage(Outcome.REPORTED, 120, 30, 0, 0, 150, 0, 9));
		assertThat(meter("/v1/responses", "{\"model\":\"gpt-4.1\",\"input\":\"Hi\"}").usage())
			.isEqualTo(new Usage(Outcome.REPORTED, 120, 30, 0, 0, 150, 0, 9));
		assertThat(meter("/v1/messages", "{\"model\":\"claude\",\"max_tokens\":100,\"messages\":[]}").usage())
			.isEqualTo(new Usage(Outcome.REPORTED, 120, 30, 7, 9, 0, 0));
		assertThat(fake.received()).extracting(FakeLlmServer.Received::path)
			.containsExactly("/v1/chat/completions", "/v1/responses", "/v1/messages");
	}

	@Test
	void streamsEachApiWithItsUsageEvents() throws Exception {
		fake.reply(Reply.usage(40, 8).withCache(0, 100).withDeltas(3));
		Usage responses = meter("/v1/responses", "{\"input\":\"Hi\",\"stream\":true}").usage();
		assertThat(responses.outcome()).isEqualTo(Outcome.REPORTED);
		assertThat(responses.tokens()).isEqualTo(48);
		assertThat(responses.streamedTextBytes()).isEqualTo(utf8("Héllo wörld-1 wörld-2").length);
		Usage messages = meter("/prefix/v1/messages", "{\"max_tokens\":9,\"stream\":true,\"messages\":[]}").usage();
		assertThat(messages).isEqualTo(new Usage(Outcome.REPORTED, 40, 8, 0, 100, 0,
				utf8("Héllo wörld-1 wörld-2").length));
	}

	@Test
	void aChatStreamCarriesItsUsageOnlyWhenAskedAndTheMeterHidesItFromAClientThatDidNot() throws Exception {
		byte[] body = utf8(CHAT_STREAM);
		String plain = text(post("/v1/chat/completions", body));
		assertThat(plain).doesNotContain("\"usage\"").endsWith("data: [DONE]\n\n");
		assertThat(fake.lastReceived().asksIncludeUsage()).isFalse();

		LlmRequest request = LlmRequest.read(LlmApi.OPENAI, body);
		UsageMeter meter = UsageMeter.of(request, TokenEstimate.of(request, 10_000));
		HttpResponse<InputStream> response = post("/v1/chat/completions", request.withIncludeUsage(body));
		String sent = read(response, meter);
		assertThat(fake.lastReceived().asksIncludeUsage()).isTrue();
		assertThat(meter.usage().tokens()).isEqualTo(30);
		// what the client gets: the chunks it would have had, each with "usage":null, no usage chunk
		assertThat(sent).doesNotContain("\"choices\":[]").endsWith("data: [DONE]\n\n");
		assertThat(sent.replace(",\"usage\":null", "").replaceAll("chatcmpl-fake\\d+", "id"))
			.isEqualTo(plain.replaceAll("chatcmpl-fake\\d+", "id"));
	}

	@Test
	void aSlowStreamSendsItsFirstEventsLongBeforeItsLast() throws Exception {
		fake.reply(Reply.DEFAULT.withEventDelay(Duration.ofMillis(150)).withDeltas(4));
		long start = System.nanoTime();
		HttpResponse<InputStream> response = post("/v1/messages", utf8("{\"stream\":true,\"messages\":[]}"));
		try (InputStream in = response.body()) {
			byte[] first = new byte[16];
			assertThat(in.read(first)).isPositive();
			long firstMillis = (System.nanoTime() - start) / 1_000_000;
			in.readAllBytes();
			long allMillis = (System.nanoTime() - start) / 1_000_000;
			// 9 events, 8 gaps of 150 ms
			assertThat(allMillis).isGreaterThanOrEqualTo(8 * 150);
			assertThat(firstMillis).isLessThan(allMillis - 600);
		}
	}

	@Test
	void answersWithoutUsageWhenToldTo() throws Exception {
		fake.reply(Reply.DEFAULT.withoutUsage());
		assertThat(meter("/v1/chat/completions", "{\"messages\":[]}").usage()).isEqualTo(Usage.NONE);
		Usage stream = meter("/v1/messages", "{\"stream\":true,\"messages\":[]}").usage();
		assertThat(stream.outcome()).isEqualTo(Outcome.PARTIAL);
		assertThat(stream.tokens()).isZero();
		assertThat(text(post("/v1/chat/completions",
				utf8("{\"stream\":true,\"stream_options\":{\"include_usage\":true},\"messages\":[]}"))))
			.doesNotContain("\"choices\":[]");
	}

	@Test
	void anErrorComesBeforeAnyTokenAndIsRefunded() throws Exception {
		fake.reply(Reply.error(503));
		HttpResponse<InputStream> response = post("/v1/chat/completions", utf8(CHAT_STREAM));
		assertThat(response.statusCode()).isEqualTo(503);
		UsageMeter meter = new UsageMeter(500, true);
		assertThat(read(response, meter)).contains("\"error\"");
		assertThat(meter.usage().outcome()).isEqualTo(Outcome.ERROR);
		assertThat(meter.charge(response.statusCode())).isZero();
		HttpResponse<InputStream> anthropic = post("/v1/messages", utf8("{}"), FakeLlmServer.HEADER_STATUS, "529");
		assertThat(anthropic.statusCode()).isEqualTo(529);
		assertThat(text(anthropic)).contains("overloaded_error");
	}

	@Test
	void aCutStreamEndsTheConnectionEarly() throws Exception {
		// spaced out: once the connection failed, the JDK client throws at the next read and drops what it
		// had buffered, so a stream cut at full speed can lose every delta before the test reads one
		fake.reply(Reply.usage(10, 500).withDeltas(50).withEventDelay(Duration.ofMillis(10)).cutAfterEvents(20));
		HttpResponse<InputStream> response = post("/v1/messages", utf8("{\"stream\":true,\"messages\":[]}"));
		UsageMeter meter = new UsageMeter(5, false);
		assertThatIOException().isThrownBy(() -> read(response, meter));
		Usage usage = meter.usage();
		assertThat(usage.outcome()).isEqualTo(Outcome.PARTIAL);
		assertThat(usage.inputTokens()).isEqualTo(10);
		assertThat(usage.streamedTextBytes()).isPositive();
		assertThat(meter.charge(200)).isEqualTo(usage.observedTokens()).isGreaterThan(5);
	}

	@Test
	void requestHeadersChooseOneRequestsReply() throws Exception {
		HttpResponse<InputStream> response = post("/v1/chat/completions", utf8("{\"messages\":[]}"),
				FakeLlmServer.HEADER_USAGE, "3,4", FakeLlmServer.HEADER_DELTAS, "2");
		UsageMeter meter = new UsageMeter(1, false);
		assertThat(read(response, meter)).contains("Héllo wörld-1\"");
		assertThat(meter.usage().tokens()).isEqualTo(7);
		assertThat(fake.lastReceived().header(FakeLlmServer.HEADER_USAGE)).isEqualTo("3,4");
		assertThat(post("/v1/embeddings", utf8("{}")).statusCode()).isEqualTo(404);
	}

	private UsageMeter meter(String path, String body) throws Exception {
		UsageMeter meter = new UsageMeter(1, false);
		read(post(path, utf8(body)), meter);
		meter.finish();
		return meter;
	}

	private HttpResponse<InputStream> post(String path, byte[] body, String... headers) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(fake.baseUrl() + path))
			.timeout(Duration.ofSeconds(10))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofByteArray(body));
		if (headers.length > 0) {
			request.headers(headers);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
	}

	/** Reads the body in small pieces through the meter, returning what it passes on. */
	private static String read(HttpResponse<InputStream> response, UsageMeter meter) throws IOException {
		StringBuilder sent = new StringBuilder();
		java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
		try (InputStream in = response.body()) {
			byte[] buffer = new byte[37];
			int n;
			while ((n = in.read(buffer)) > 0) {
				ByteBuffer passed = meter.pass(ByteBuffer.wrap(buffer, 0, n).slice());
				byte[] copy = new byte[passed.remaining()];
				passed.duplicate().get(copy);
				out.writeBytes(copy);
			}
		}
		ByteBuffer rest = meter.finish();
		byte[] copy = new byte[rest.remaining()];
		rest.get(copy);
		out.writeBytes(copy);
		sent.append(out.toString(StandardCharsets.UTF_8));
		return sent.toString();
	}

	private static String text(HttpResponse<InputStream> response) throws IOException {
		try (InputStream in = response.body()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}
