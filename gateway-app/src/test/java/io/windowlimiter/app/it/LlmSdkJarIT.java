package io.windowlimiter.app.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.openai.client.OpenAIClient;
import com.openai.client.OpenAIClientImpl;
import com.openai.client.okhttp.OkHttpClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.ClientOptions;
import com.openai.core.RequestOptions;
import com.openai.core.http.HttpResponseFor;
import com.openai.errors.BadRequestException;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Issue 45's "done when": the providers' official Java SDKs (openai-java, anthropic-java), pointed at the packaged
 * jar as at the provider, raise their own {@code RateLimitException} for a refusal of the gateway, with the message
 * the gateway wrote (naming tokens, or the budget in dollars), the provider's error type, and the rate-limit headers;
 * and they do not retry a refusal the gateway marks {@code x-should-retry: false}. Before issue 45 the SDKs raised
 * "429 status code (no body)". One jar, a real Redis and the fake OpenAI/Anthropic upstream; each case is a client
 * ({@code X-API-Key}) of its own; fixed windows of a day, so no edge falls inside a test.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LlmSdkJarIT {

	static final int BUDGET = 1000;

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private RedisProcess redis;

	private FakeLlmServer upstream;

	private GatewayJar gateway;

	@BeforeAll
	void start() {
		this.redis = RedisProcess.launch();
		this.upstream = FakeLlmServer.start();
		RouteFile routes = new RouteFile(this.upstream.baseUrl());
		routes.windowRateLimit("llm", List.of(LlmRoutesIT.budget("openai")));
		routes.windowRateLimit("claude", List.of(LlmRoutesIT.budget("anthropic")));
		// $0.015 a day and a token limit beside it: at $10 per million output tokens, one call of 1,000 fits, two do not
		Map<String, Object> spend = new LinkedHashMap<>();
		spend.put("key-resolver", "#{@headerKeyResolver}");
		spend.put("llm", "openai");
		spend.put("limits[0].algorithm", "fixed-window");
		spend.put("limits[0].limit", "0.015");
		spend.put("limits[0].window", "1d");
		spend.put("limits[0].unit", "usd");
		spend.put("limits[1].algorithm", "fixed-window");
		spend.put("limits[1].limit", 100000);
		spend.put("limits[1].window", "1d");
		spend.put("limits[1].unit", "tokens");
		routes.windowRateLimit("spend", List.of(spend));
		// one call a second (sliding): a refusal that passes within a minute, which the SDK retries
		Map<String, Object> second = new LinkedHashMap<>();
		second.put("key-resolver", "#{@headerKeyResolver}");
		second.put("llm", "openai");
		second.put("limits[0].limit", 1);
		second.put("limits[0].window", "1s");
		second.put("limits[1].limit", 100000);
		second.put("limits[1].window", "1d");
		second.put("limits[1].unit", "tokens");
		routes.windowRateLimit("second", List.of(second));
		this.gateway = GatewayJar.start("llm-sdk-it", this.redis.port(), routes.write(),
				"--management.endpoints.web.exposure.include=health,ratelimits",
				// USD per million tokens; no default entry, so another model has no price on the money route
				"--window-rate-limiter.llm-prices.[gpt-fake].input=0",
				"--window-rate-limiter.llm-prices.[gpt-fake].output=10",
				// the loaded build machine: a decision Redis answers late must not fail open and over-admit
				"--window-rate-limiter.redis-timeout=5s", "--window-rate-limiter.redis-stall-timeout=4s");
	}

	@AfterAll
	void stop() throws Exception {
		Resources.close(this.gateway, this.upstream, this.redis);
	}

	/** OpenAI's SDK on {@code /<route>/v1}, as the client {@code client}; no retries unless {@code retries}. */
	private OpenAIClient openai(String route, String client, int retries) {
		return OpenAIOkHttpClient.builder()
			.baseUrl(base(route) + "/v1")
			.apiKey("sk-test")
			.putHeader("X-API-Key", client)
			.maxRetries(retries)
			.timeout(Duration.ofSeconds(30))
			.build();
	}

	private AnthropicClient anthropic(String route, String client) {
		return AnthropicOkHttpClient.builder()
			.baseUrl(base(route))
			.apiKey("sk-ant-test")
			.putHeader("X-API-Key", client)
			.maxRetries(0)
			.timeout(Duration.ofSeconds(30))
			.build();
	}

	private String base(String route) {
		return "http://127.0.0.1:" + this.gateway.port() + "/" + route;
	}

	private static ChatCompletionCreateParams chat(String model, long maxTokens, String usage) {
		return ChatCompletionCreateParams.builder()
			.model(model)
			.addUserMessage("hi")
			.maxCompletionTokens(maxTokens)
			.putAdditionalHeader(FakeLlmServer.HEADER_USAGE, usage)
			.build();
	}

	/** The gateway's estimate of the body the upstream last received: half its bytes, rounded up, plus its output. */
	private long lastEstimate(long maxTokens) {
		return (this.upstream.lastReceived().body().length + 1) / 2 + maxTokens;
	}

	@Test
	void openAiSdkRaisesRateLimitExceptionNamingTokensWhenTheTokenBudgetIsSpent() throws Exception {
		String client = UUID.randomUUID().toString();
		OpenAIClient sdk = openai("llm", client, 0);
		try {
			HttpResponseFor<ChatCompletion> first = sdk.chat().completions().withRawResponse().create(chat("gpt-fake", 300, "100,200"));
			ChatCompletion completion = first.parse();
			assertThat(completion.choices().get(0).message().content()).hasValueSatisfying(text -> assertThat(text).startsWith("Héllo"));
			assertThat(completion.usage()).hasValueSatisfying(usage -> {
				assertThat(usage.promptTokens()).isEqualTo(100);
				assertThat(usage.completionTokens()).isEqualTo(200);
			});
			long firstEstimate = lastEstimate(300);
			assertThat(first.headers().values("x-ratelimit-limit-tokens")).containsExactly(Integer.toString(BUDGET));
			assertThat(first.headers().values("x-ratelimit-remaining-tokens")).containsExactly(Long.toString(BUDGET - firstEstimate));
			assertThat(first.headers().values("x-ratelimit-remaining-requests")).containsExactly("99");
			// settled to its usage, 300: 700 left
			assertThat(eventually(BUDGET - 300, "llm", client)).isEqualTo(BUDGET - 300);
			int sent = this.upstream.received().size();
			RateLimitException refused = catchThrowableOfType(RateLimitException.class,
					() -> sdk.chat().completions().create(chat("gpt-fake", 800, "100,200")));
			// the same body with 800 for 300 (as many digits): as many bytes
			long asked = firstEstimate - 300 + 800;
			assertThat(refused).as("the SDK raised its RateLimitException").isNotNull();
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.type()).hasValue("tokens");
			assertThat(refused.code()).hasValue("rate_limit_exceeded");
			assertThat(refused.getMessage()).contains("Rate limit reached on tokens (limit 'llm-0': 1000 tokens per 1d): "
					+ "Remaining 700, Requested " + asked + ". Please try again in ");
			assertThat(refused.headers().values("x-should-retry")).containsExactly("false");
			assertThat(refused.headers().values("retry-after")).hasSize(1);
			assertThat(refused.headers().values("x-ratelimit-limit-tokens")).containsExactly(Integer.toString(BUDGET));
			assertThat(refused.headers().values("x-ratelimit-remaining-tokens")).containsExactly("700");
			assertThat(this.upstream.received()).as("sent upstream").hasSize(sent);
		}
		finally {
			sdk.close();
		}
	}

	@Test
	void anthropicSdkRaisesRateLimitExceptionNamingTokensWhenTheTokenBudgetIsSpent() throws Exception {
		String client = UUID.randomUUID().toString();
		AnthropicClient sdk = anthropic("claude", client);
		try {
			com.anthropic.core.http.HttpResponseFor<Message> first = sdk.messages().withRawResponse().create(messages(300));
			Message message = first.parse();
			assertThat(message.content().get(0).text()).hasValueSatisfying(text -> assertThat(text.text()).startsWith("Héllo"));
			assertThat(message.usage().inputTokens()).isEqualTo(100);
			assertThat(message.usage().outputTokens()).isEqualTo(200);
			long firstEstimate = lastEstimate(300);
			assertThat(first.headers().values("anthropic-ratelimit-tokens-limit")).containsExactly(Integer.toString(BUDGET));
			assertThat(first.headers().values("anthropic-ratelimit-tokens-remaining")).containsExactly(Long.toString(BUDGET - firstEstimate));
			assertThat(first.headers().values("anthropic-ratelimit-requests-remaining")).containsExactly("99");
			assertThat(eventually(BUDGET - 300, "claude", client)).isEqualTo(BUDGET - 300);
			int sent = this.upstream.received().size();
			com.anthropic.errors.RateLimitException refused = catchThrowableOfType(
					com.anthropic.errors.RateLimitException.class, () -> sdk.messages().create(messages(800)));
			long asked = firstEstimate - 300 + 800;
			assertThat(refused).as("the SDK raised its RateLimitException").isNotNull();
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.type()).hasValue(ErrorType.RATE_LIMIT_ERROR);
			String expected = "Rate limit reached on tokens (limit 'claude-0': 1000 tokens per 1d): Remaining 700, "
					+ "Requested " + asked + ". Please try again in ";
			assertThat(refused.apiMessage()).hasValueSatisfying(text -> assertThat(text).startsWith(expected));
			assertThat(refused.getMessage()).contains(expected);
			assertThat(refused.headers().values("x-should-retry")).containsExactly("false");
			assertThat(refused.headers().values("retry-after")).hasSize(1);
			assertThat(refused.headers().values("anthropic-ratelimit-tokens-remaining")).containsExactly("700");
			assertThat(this.upstream.received()).as("sent upstream").hasSize(sent);
		}
		finally {
			sdk.close();
		}
	}

	private static MessageCreateParams messages(long maxTokens) {
		return MessageCreateParams.builder()
			.model("claude-fake")
			.maxTokens(maxTokens)
			.addUserMessage("hi")
			.putAdditionalHeader(FakeLlmServer.HEADER_USAGE, "100,200")
			.build();
	}

	/**
	 * Issue 45: "a budget of $0.015 at $10 per million output tokens admits one 1,000-token call, not two". The
	 * second is OpenAI's own answer to a spent budget, {@code insufficient_quota}, in dollars; a model the price
	 * table does not name is a 400 naming it, before anything is counted or sent.
	 */
	@Test
	void openAiSdkRaisesInsufficientQuotaInDollarsWhenTheMoneyBudgetIsSpentAndBadRequestForAnUnpricedModel()
			throws Exception {
		String client = UUID.randomUUID().toString();
		OpenAIClient sdk = openai("spend", client, 0);
		try {
			HttpResponseFor<ChatCompletion> first = sdk.chat().completions().withRawResponse().create(chat("gpt-fake", 1000, "0,1000"));
			assertThat(first.parse().usage()).hasValueSatisfying(usage -> assertThat(usage.completionTokens()).isEqualTo(1000));
			// reserved: the prompt at $0 and 1,000 output tokens at $10 per million, $0.01
			assertThat(first.headers().values("X-RateLimit-Limit-Usd")).containsExactly("0.015");
			assertThat(first.headers().values("X-RateLimit-Remaining-Usd")).containsExactly("0.005");
			int sent = this.upstream.received().size();
			RateLimitException refused = catchThrowableOfType(RateLimitException.class,
					() -> sdk.chat().completions().create(chat("gpt-fake", 1000, "0,1000")));
			assertThat(refused).as("the SDK raised its RateLimitException").isNotNull();
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.type()).hasValue("insufficient_quota");
			assertThat(refused.code()).hasValue("insufficient_quota");
			assertThat(refused.getMessage()).contains("Budget reached (limit 'spend-0': $0.015 per 1d): Remaining $0.005, "
					+ "Requested $0.01. Please try again in ");
			assertThat(refused.headers().values("x-should-retry")).containsExactly("false");
			assertThat(refused.headers().values("X-RateLimit-Remaining-Usd")).containsExactly("0.005");
			assertThat(this.upstream.received()).as("sent upstream").hasSize(sent);

			String other = UUID.randomUUID().toString();
			OpenAIClient unpriced = openai("spend", other, 0);
			try {
				BadRequestException bad = catchThrowableOfType(BadRequestException.class,
						() -> unpriced.chat().completions().create(chat("gpt-unpriced", 10, "1,1")));
				assertThat(bad).as("the SDK raised its BadRequestException").isNotNull();
				assertThat(bad.statusCode()).isEqualTo(400);
				assertThat(bad.type()).hasValue("invalid_request_error");
				assertThat(bad.param()).hasValue("model");
				assertThat(bad.getMessage()).contains("The model 'gpt-unpriced' has no price on this route");
			}
			finally {
				unpriced.close();
			}
			assertThat(this.upstream.received()).as("sent upstream").hasSize(sent);
			// nothing counted for the unpriced call: a priced call of that client still has the whole budget
			HttpResponse<String> raw = this.http.send(HttpRequest
				.newBuilder(URI.create(base("spend") + "/v1/chat/completions"))
				.timeout(Duration.ofSeconds(30))
				.header("X-API-Key", other)
				.header("Content-Type", "application/json")
				.header(FakeLlmServer.HEADER_USAGE, "0,1000")
				.POST(HttpRequest.BodyPublishers.ofString(
						"{\"model\":\"gpt-fake\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":1000}"))
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(raw.statusCode()).as(raw.body()).isEqualTo(200);
			assertThat(raw.headers().firstValue("X-RateLimit-Remaining-Usd")).hasValue("0.005");
		}
		finally {
			sdk.close();
		}
	}

	/**
	 * With its default retries (2), the SDK retries a 429 after the {@code retry-after} it reads when that is within
	 * a minute, and at once raises one the gateway marks {@code x-should-retry: false} (a budget of a day spent):
	 * it would otherwise retry it twice, on its own back-off. Every attempt the SDK makes is counted.
	 */
	@Test
	void withItsDefaultRetriesTheSdkRetriesASoonRefusalButNotOneMarkedShouldRetryFalse() throws Exception {
		String client = UUID.randomUUID().toString();
		AtomicInteger attempts = new AtomicInteger();
		OpenAIClient sdk = countingOpenai("llm", client, attempts);
		try {
			// the estimate is capped at the budget; the usage, 500 + 500, spends it
			sdk.chat().completions().create(chat("gpt-fake", 5000, "500,500"));
			assertThat(eventually(0, "llm", client)).isZero();
			attempts.set(0);
			long started = System.nanoTime();
			RateLimitException refused = catchThrowableOfType(RateLimitException.class,
					() -> sdk.chat().completions().create(chat("gpt-fake", 10, "1,1")));
			Duration took = Duration.ofNanos(System.nanoTime() - started);
			assertThat(refused).isNotNull();
			assertThat(refused.headers().values("x-should-retry")).containsExactly("false");
			assertThat(attempts.get()).as("attempts of the SDK, in %s ms", took.toMillis()).isEqualTo(1);
		}
		finally {
			sdk.close();
		}
		// the control: a refusal that passes within a second has no x-should-retry: false, and the SDK retries it
		String soon = UUID.randomUUID().toString();
		AtomicInteger soonAttempts = new AtomicInteger();
		OpenAIClient retrying = countingOpenai("second", soon, soonAttempts);
		try {
			retrying.chat().completions().create(chat("gpt-fake", 10, "1,1"));
			soonAttempts.set(0);
			try {
				retrying.chat().completions().create(chat("gpt-fake", 10, "1,1"));
			}
			catch (RateLimitException stillRefused) {
				// two retries, each refused again: counted the same
			}
			assertThat(soonAttempts.get()).as("attempts of the SDK").isGreaterThan(1);
		}
		finally {
			retrying.close();
		}
	}

	/** OpenAI's SDK with its default retries, on an HTTP client that counts every attempt it sends. */
	private OpenAIClient countingOpenai(String route, String client, AtomicInteger attempts) {
		com.openai.core.http.HttpClient okhttp = OkHttpClient.builder().timeout(Duration.ofSeconds(30)).build();
		com.openai.core.http.HttpClient counting = new com.openai.core.http.HttpClient() {

			@Override
			public com.openai.core.http.HttpResponse execute(com.openai.core.http.HttpRequest request,
					RequestOptions options) {
				attempts.incrementAndGet();
				return okhttp.execute(request, options);
			}

			@Override
			public CompletableFuture<com.openai.core.http.HttpResponse> executeAsync(
					com.openai.core.http.HttpRequest request, RequestOptions options) {
				attempts.incrementAndGet();
				return okhttp.executeAsync(request, options);
			}

			@Override
			public void close() {
				okhttp.close();
			}

		};
		return new OpenAIClientImpl(ClientOptions.builder()
			.httpClient(counting)
			.baseUrl(base(route) + "/v1")
			.apiKey("sk-test")
			.putHeader("X-API-Key", client)
			.build());
	}

	/** What the client has left of the route's first limit once it equals {@code expected} (a settle follows the answer), else the last. */
	private long eventually(long expected, String route, String client) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		long last = left(route, client);
		while (last != expected && System.nanoTime() < deadline) {
			Thread.sleep(25);
			last = left(route, client);
		}
		return last;
	}

	private long left(String route, String client) throws Exception {
		HttpResponse<String> standing = this.http.send(HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.gateway.port() + "/actuator/ratelimits/" + route + "/" + client))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(standing.statusCode()).as(standing.body()).isEqualTo(200);
		return JsonMapper.shared().readTree(standing.body()).path("limits").get(0).path("remaining").asLong();
	}

}
