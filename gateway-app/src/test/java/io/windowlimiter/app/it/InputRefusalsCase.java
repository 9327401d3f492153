package io.windowlimiter.app.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.gateway.test.FakeLlmServer;
import org.assertj.core.api.SoftAssertions;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 44, attack round 2, findings 3 to 5, on a packaged jar, either server: what a client writes beside its
 * body and its key must not take it out of its budget.
 * <ul>
 * <li>3: an LLM call whose body is gzip (or any coding but identity) is refused with 415 naming
 * {@code Content-Encoding} before it is read: nothing charged, nothing sent upstream (the meter cannot read it,
 * the upstream may decode it).</li>
 * <li>4: an allow-list entry written as a credential's hash exempts that credential only, not a client that sends
 * the hash text as its key; the same for an operator's exemption made by the hash.</li>
 * <li>5: credential headers carrying different keys (a random {@code Bearer} and the real {@code x-api-key}) are
 * refused with 400 naming them, nothing charged, nothing sent upstream; the same key in both passes.</li>
 * </ul>
 * Routes (on path {@code /<id>/**}), both keyed by {@code apiKeyResolver}: {@value #LLM} (OpenAI to the fake LLM,
 * {@value #BUDGET} tokens a day, then 100 calls) and {@value #LISTED} ({@value #LIMIT} requests an hour, its allow
 * list naming a key in clear), the gateway's allow list naming another key by its hash.
 */
final class InputRefusalsCase {

	static final String LLM = "llm-in";

	static final String LISTED = "listed";

	static final int BUDGET = 20_000;

	static final int LIMIT = 3;

	static final String SECRET = "it-secret-0123456789abcdef0123456789";

	private static final ClientKeyHash HASH = new ClientKeyHash(SECRET);

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final String run = Long.toString(System.nanoTime(), 36);

	/** Allow-listed by the gateway by its hash. */
	private final String vip = "sk-vip-" + this.run;

	/** Allow-listed by the route as written. */
	private final String vipInClear = "sk-clear-" + this.run;

	private final FakeLlmServer llm;

	private GatewayJar gateway;

	/** A case of keys of its own; its routes' and jar's arguments from {@link #llmArgs}, {@link #listedArgs}, {@link #jarArgs}. */
	InputRefusalsCase(FakeLlmServer llm) {
		this.llm = llm;
	}

	/** Runs the three findings on the jar started with this case's routes and arguments; all are asserted at the end. */
	void run(GatewayJar gateway) throws Exception {
		this.gateway = gateway;
		SoftAssertions softly = new SoftAssertions();
		aCompressedLlmBodyIsRefusedBeforeItIsRead(softly);
		differentKeysInTheCredentialHeadersAreRefused(softly);
		aHashSentAsTheKeyIsNotTheListedClient(softly);
		softly.assertAll();
	}

	/** The LLM route's arguments, without its key resolver (each server names it its own way). */
	static Map<String, Object> llmArgs() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("llm", "openai");
		args.put("fail-mode", "closed");
		args.put("limits[0].algorithm", "fixed-window");
		args.put("limits[0].limit", BUDGET);
		args.put("limits[0].window", "1d");
		args.put("limits[0].unit", "tokens");
		args.put("limits[1].algorithm", "fixed-window");
		args.put("limits[1].limit", 100);
		args.put("limits[1].window", "1d");
		return args;
	}

	/** The listed route's arguments, without its key resolver. */
	Map<String, Object> listedArgs() {
		return RouteFile.with(RouteFile.limit("sliding-log", LIMIT, "1h"), "allow", this.vipInClear);
	}

	/** What the jar is started with besides its routes. */
	List<String> jarArgs() {
		return List.of("--management.endpoints.web.exposure.include=health,ratelimits",
				"--window-rate-limiter.client-key-secret=" + SECRET, "--window-rate-limiter.allow=" + HASH.of(this.vip),
				// the loaded build machine: a decision Redis answers late must not fail open
				"--window-rate-limiter.redis-timeout=5s", "--window-rate-limiter.redis-stall-timeout=4s");
	}

	/** Finding 3. */
	private void aCompressedLlmBodyIsRefusedBeforeItIsRead(SoftAssertions softly) throws Exception {
		String key = "sk-gz-" + this.run;
		String body = "{\"model\":\"gpt-fake\",\"stream\":true,\"stream_options\":{\"include_usage\":false},\"n\":4,"
				+ "\"max_tokens\":3000,\"messages\":[{\"role\":\"user\",\"content\":\"" + "hello ".repeat(200) + "\"}]}";
		int received = this.llm.received().size();
		for (String coding : List.of("gzip", "GZIP, identity", "br")) {
			HttpResponse<String> answer = HTTP.send(llmCall(key)
				.header("Content-Encoding", coding)
				.POST(HttpRequest.BodyPublishers.ofByteArray(gzip(body)))
				.build(), HttpResponse.BodyHandlers.ofString());
			softly.assertThat(answer.statusCode()).as("Content-Encoding: " + coding + ", " + answer.body()).isEqualTo(415);
			// an OpenAI route: OpenAI's error object (issue 45), naming the header
			softly.assertThat(answer.body()).as(coding)
				.contains("\"type\":\"invalid_request_error\"", "(Content-Encoding: " + coding + ")");
			softly.assertThat(answer.headers().firstValue("Accept-Encoding")).as(coding).hasValue("identity");
		}
		softly.assertThat(this.llm.received().size() - received).as("calls sent upstream").isZero();
		softly.assertThat(tokensLeft(LLM, key)).as("tokens charged").isEqualTo(BUDGET);
		// the same call as it is: metered as ever
		HttpResponse<String> plain = HTTP.send(llmCall(key).header("Content-Encoding", "identity")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
		softly.assertThat(plain.statusCode()).as("identity, " + plain.body()).isEqualTo(200);
		softly.assertThat(this.llm.received().size() - received).as("the plain call, upstream").isEqualTo(1);
	}

	/** Finding 5. */
	private void differentKeysInTheCredentialHeadersAreRefused(SoftAssertions softly) throws Exception {
		String real = "sk-real-" + this.run;
		String body = "{\"model\":\"gpt-fake\",\"max_tokens\":4000,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
		int received = this.llm.received().size();
		List<String[]> pairs = List.of(new String[] { "Authorization", "Bearer rnd-" + this.run, "x-api-key", real },
				new String[] { "x-api-key", real, "api-key", "other-" + this.run });
		for (String[] pair : pairs) {
			HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(uri("/" + LLM + "/v1/chat/completions"))
				.timeout(Duration.ofSeconds(30))
				.header("Content-Type", "application/json")
				.header(pair[0], pair[1])
				.header(pair[2], pair[3])
				.POST(HttpRequest.BodyPublishers.ofString(body))
				.build(), HttpResponse.BodyHandlers.ofString());
			softly.assertThat(answer.statusCode()).as(pair[0] + " and " + pair[2] + ", " + answer.body()).isEqualTo(400);
			softly.assertThat(answer.body()).as(pair[0] + " and " + pair[2])
				.contains("\"type\":\"invalid_request_error\"", "different credentials in " + pair[0] + ", " + pair[2]);
		}
		softly.assertThat(this.llm.received().size() - received).as("calls sent upstream").isZero();
		softly.assertThat(tokensLeft(LLM, real)).as("the real key's tokens").isEqualTo(BUDGET);
		// one key in both headers is one credential
		HttpResponse<String> same = HTTP.send(HttpRequest.newBuilder(uri("/" + LLM + "/v1/chat/completions"))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.header("Authorization", "Bearer " + real)
			.header("x-api-key", real)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
		softly.assertThat(same.statusCode()).as("the same key twice, " + same.body()).isEqualTo(200);
		softly.assertThat(tokensLeft(LLM, real)).as("the real key charged").isLessThan(BUDGET);
	}

	/** Finding 4, and the operator's exemption by hash. */
	private void aHashSentAsTheKeyIsNotTheListedClient(SoftAssertions softly) throws Exception {
		// the hash of each listed client, as the endpoint, topDenied and logs show it
		for (String listed : List.of(this.vip, this.vipInClear)) {
			List<Integer> statuses = statuses(HASH.of(listed), LIMIT + 2);
			softly.assertThat(statuses).as("a client sending the hash of " + listed + " as its key")
				.containsExactly(200, 200, 200, 429, 429);
			softly.assertThat(statuses(listed, LIMIT + 2)).as("the listed client itself").containsOnly(200);
		}
		// an operator's exemption made by the hash, as the endpoint names the client
		String exempt = "sk-exempt-" + this.run;
		HttpResponse<String> made = HTTP.send(HttpRequest
			.newBuilder(uri("/actuator/ratelimits/" + LISTED + "/" + URLEncoder.encode(HASH.of(exempt), StandardCharsets.UTF_8)))
			.timeout(Duration.ofSeconds(10))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"exempt\": true}"))
			.build(), HttpResponse.BodyHandlers.ofString());
		softly.assertThat(made.statusCode()).as(made.body()).isEqualTo(200);
		GatewayJar.sleep(500);
		softly.assertThat(statuses(HASH.of(exempt), LIMIT + 2)).as("a client sending the exempt hash as its key")
			.containsExactly(200, 200, 200, 429, 429);
		softly.assertThat(statuses(exempt, LIMIT + 2)).as("the exempt client").containsOnly(200);
	}

	private List<Integer> statuses(String key, int requests) throws IOException, InterruptedException {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			statuses.add(HTTP.send(HttpRequest.newBuilder(uri("/" + LISTED + "/x"))
				.header("x-api-key", key)
				.timeout(Duration.ofSeconds(10))
				.build(), HttpResponse.BodyHandlers.discarding()).statusCode());
		}
		return statuses;
	}

	private HttpRequest.Builder llmCall(String key) {
		return HttpRequest.newBuilder(uri("/" + LLM + "/v1/chat/completions"))
			.timeout(Duration.ofSeconds(30))
			.header("Authorization", "Bearer " + key)
			.header("Content-Type", "application/json");
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.gateway.port() + path);
	}

	/** The tokens left to the client on the route, read through the endpoint by its key. */
	private long tokensLeft(String route, String key) throws IOException, InterruptedException {
		HttpResponse<String> standing = HTTP.send(HttpRequest
			.newBuilder(uri("/actuator/ratelimits/" + route + "/" + URLEncoder.encode(key, StandardCharsets.UTF_8)))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
		JsonNode limits = JsonMapper.shared().readTree(standing.body()).path("limits");
		return limits.get(0).path("remaining").asLong(-1);
	}

	private static byte[] gzip(String text) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (GZIPOutputStream zip = new GZIPOutputStream(out)) {
			zip.write(text.getBytes(StandardCharsets.UTF_8));
		}
		return out.toByteArray();
	}

}
