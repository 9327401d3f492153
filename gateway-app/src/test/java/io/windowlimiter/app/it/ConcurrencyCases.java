package io.windowlimiter.app.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.gateway.test.FakeLlmServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code algorithm: concurrency} through two packaged jars on one {@code redis-server}: one client's requests
 * raced at both instances at once before a downstream that holds them ({@link HeldJdkDownstream}): exactly the
 * limit reach it, the rest are refused at once with 429 and {@code Retry-After: 1}; once the held ones end,
 * their slots are free again on both instances; a client that hangs up mid-stream frees its slot for the other
 * instance; an LLM stream holds its slot until its last event. Asserted through what reached the downstream and
 * the client's sorted set in Redis ({@code wrl:{<client's hash>}:<route>:cc}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ConcurrencyCases {

	private static final int LIMIT = 3;

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final JarPair pair;

	private final HeldJdkDownstream held;

	private final RedisClient redisClient;

	private final StatefulRedisConnection<String, String> redis;

	ConcurrencyCases(JarPair pair, HeldJdkDownstream held) {
		this.pair = pair;
		this.held = held;
		this.redisClient = RedisClient.create("redis://127.0.0.1:" + pair.redisPort());
		this.redis = this.redisClient.connect();
	}

	/** {@code conc}: 3 in flight at once per client before the held downstream; {@code conc-llm}: 1 stream at once. */
	static void routes(RouteFile routes, HeldJdkDownstream held, FakeLlmServer llm) {
		Map<String, Object> conc = new LinkedHashMap<>();
		conc.put("key-resolver", "#{@headerKeyResolver}");
		conc.put("algorithm", "concurrency");
		conc.put("limit", LIMIT);
		conc.put("window", "30s");
		routes.windowRateLimit("conc", held.uri(), List.of(conc));
		Map<String, Object> chat = new LinkedHashMap<>();
		chat.put("key-resolver", "#{@headerKeyResolver}");
		chat.put("llm", "openai");
		chat.put("limits[0].limit", 100000);
		chat.put("limits[0].window", "1m");
		chat.put("limits[0].unit", "tokens");
		chat.put("limits[1].algorithm", "concurrency");
		chat.put("limits[1].limit", 1);
		chat.put("limits[1].window", "1m");
		routes.windowRateLimit("conc-llm", llm.baseUrl(), List.of(chat));
	}

	@AfterEach
	void letEverythingEnd() {
		this.held.open();
	}

	@AfterAll
	void closeRedis() {
		this.redis.close();
		this.redisClient.shutdown();
	}

	@Test
	void exactlyTheLimitReachTheDownstreamFromBothInstancesAndTheirSlotsFreeOnBothWhenTheyEnd() throws Exception {
		String client = "race-" + this.run;
		// the same traffic first on a path answered at once, each request a client of its own: the first decisions
		// of a fresh jar are slow, and one Redis answers past redis-timeout passes in fail-mode open, slot-less
		List<CompletableFuture<HttpResponse<String>>> warm = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			warm.add(send(this.pair.both().get(i % 2), "/conc/warm", "warm-" + i + "-" + this.run));
		}
		CompletableFuture.allOf(warm.toArray(CompletableFuture[]::new)).get();
		this.held.hold();
		// 20 at once, alternating between the instances, each on a connection of its own
		List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			calls.add(send(this.pair.both().get(i % 2), "/conc/held", client));
		}
		await("17 refused while 3 are held", () -> calls.stream().filter(CompletableFuture::isDone).count() == 17);
		long refusedBy = System.nanoTime();
		List<HttpResponse<String>> refused = calls.stream().filter(CompletableFuture::isDone).map(CompletableFuture::join)
			.toList();
		assertThat(refused).allSatisfy(response -> {
			assertThat(response.statusCode()).as(response.body()).isEqualTo(429);
			assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
		});
		await("3 held at the downstream", () -> this.held.inFlight("/conc/held") == LIMIT);
		assertThat(this.held.hits("/conc/held")).isEqualTo(LIMIT);
		assertThat(slots("conc", client)).isEqualTo(LIMIT);
		this.held.open();
		for (CompletableFuture<HttpResponse<String>> call : calls) {
			assertThat(call.get().statusCode()).isIn(200, 429);
		}
		assertThat(calls.stream().filter(call -> call.join().statusCode() == 200)).hasSize(LIMIT);
		assertThat(this.held.maxInFlight("/conc/held")).isEqualTo(LIMIT);
		// each slot is released when its response ends: the client's sorted set is gone
		await("every slot released", () -> !exists("conc", client));
		// all three slots free again, on both instances: three held at once through A, B, A, a fourth refused.
		// Once the refusals' Retry-After (1 s) has passed: an instance that refused the client may answer from its
		// deny cache until then (docs/algorithms.md), unless it released one of the slots itself
		GatewayJar.sleep(Math.max(0, 1_100 - Duration.ofNanos(System.nanoTime() - refusedBy).toMillis()));
		this.held.hold();
		List<CompletableFuture<HttpResponse<String>>> again = new ArrayList<>();
		for (int i = 0; i < LIMIT; i++) {
			again.add(send(this.pair.both().get(i % 2), "/conc/held", client));
			int reached = LIMIT + i + 1;
			await("the " + reached + "th reached the downstream", () -> this.held.hits("/conc/held") == reached);
		}
		HttpResponse<String> fourth = send(this.pair.b(), "/conc/held", client).get();
		assertThat(fourth.statusCode()).isEqualTo(429);
		assertThat(slots("conc", client)).isEqualTo(LIMIT);
		this.held.open();
		for (CompletableFuture<HttpResponse<String>> call : again) {
			assertThat(call.get().statusCode()).isEqualTo(200);
		}
		await("every slot released again", () -> !exists("conc", client));
		assertThat(this.held.hits("/conc/held")).isEqualTo(2 * LIMIT);
		assertThat(this.held.maxInFlight("/conc/held")).isEqualTo(LIMIT);
	}

	@Test
	void aClientThatHangsUpMidStreamFreesItsSlotForTheOtherInstance() throws Exception {
		String client = "hangup-" + this.run;
		this.held.hold();
		List<Socket> streams = new ArrayList<>();
		try {
			for (int i = 0; i < LIMIT; i++) {
				streams.add(stream(this.pair.both().get(i % 2), "/conc/stream", client));
			}
			assertThat(slots("conc", client)).isEqualTo(LIMIT);
			// refused through A: B, which refused nothing, answers the next from Redis, not from a deny cache
			assertThat(send(this.pair.a(), "/conc/stream", client).get().statusCode()).isEqualTo(429);
			// the client hangs up the stream it holds through A: A releases its slot
			streams.remove(0).close();
			await("the slot of the stream given up released", () -> slots("conc", client) == LIMIT - 1);
			await("the downstream saw it end", () -> this.held.inFlight("/conc/stream") == LIMIT - 1);
			// taken through B at once
			streams.add(stream(this.pair.b(), "/conc/stream", client));
			assertThat(slots("conc", client)).isEqualTo(LIMIT);
			assertThat(this.held.hits("/conc/stream")).isEqualTo(LIMIT + 1);
			assertThat(this.held.maxInFlight("/conc/stream")).isEqualTo(LIMIT);
		}
		finally {
			for (Socket stream : streams) {
				stream.close();
			}
		}
		await("all released", () -> !exists("conc", client));
	}

	@Test
	void anLlmStreamHoldsItsSlotUntilItsLastEventOnEitherInstance() throws Exception {
		String client = "llm-" + this.run;
		// six deltas 300 ms apart: about two seconds of stream through A
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.pair.a().port()), 5_000);
			socket.setSoTimeout((int) WAIT.toMillis());
			String body = chatBody(true);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /conc-llm/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + client
					+ "\r\nContent-Type: application/json\r\n" + FakeLlmServer.HEADER_DELAY_MS + ": 300\r\n"
					+ FakeLlmServer.HEADER_DELTAS + ": 6\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
				.getBytes(StandardCharsets.UTF_8));
			out.flush();
			BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
			assertThat(in.readLine()).startsWith("HTTP/1.1 200");
			for (String line = in.readLine(); !line.startsWith("data:"); line = in.readLine()) {
				// the head, then chunk sizes, up to the first event
			}
			HttpResponse<String> second = chat(this.pair.b(), client);
			assertThat(second.statusCode()).as("a second call through B while it streams through A").isEqualTo(429);
			assertThat(second.headers().firstValue("Retry-After")).hasValue("1");
			assertThat(slots("conc-llm", client)).isEqualTo(1);
			// the last chunk with text's finish_reason, then (600 ms later: the usage event the gateway asked for and
			// keeps from the client) the last event
			for (String line = in.readLine(); !line.contains("\"finish_reason\":\"stop\""); line = in.readLine()) {
			}
			assertThat(slots("conc-llm", client)).as("held until the last event").isEqualTo(1);
			for (String line = in.readLine(); !line.contains("[DONE]"); line = in.readLine()) {
			}
			await("its slot released once the stream ended", () -> !exists("conc-llm", client));
		}
		assertThat(chat(this.pair.b(), client).statusCode()).isEqualTo(200);
	}

	private CompletableFuture<HttpResponse<String>> send(GatewayJar gateway, String path, String client) {
		return this.http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
			.timeout(WAIT)
			.header("X-API-Key", client)
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** Opens a stream on a connection of its own and reads up to its first event: it has its slot. */
	private Socket stream(GatewayJar gateway, String path, String client) throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress("127.0.0.1", gateway.port()), 5_000);
		socket.setSoTimeout((int) WAIT.toMillis());
		socket.getOutputStream()
			.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + client + "\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
		BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
		String status = in.readLine();
		if (!status.startsWith("HTTP/1.1 200")) {
			StringBuilder head = new StringBuilder(status);
			for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
				head.append(" | ").append(line);
			}
			socket.close();
			throw new AssertionError("through " + gateway + ": " + head + "; in Redis at " + System.currentTimeMillis() + ": "
					+ this.redis.sync().zrangeWithScores(key("conc", client), 0, -1));
		}
		for (String line = in.readLine(); !line.startsWith("data: first"); line = in.readLine()) {
			// the head, then a chunk's size, up to the first event
		}
		return socket;
	}

	private static String chatBody(boolean stream) {
		return "{\"model\":\"gpt-4.1\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
	}

	private HttpResponse<String> chat(GatewayJar gateway, String client) throws Exception {
		return this.http.send(HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/conc-llm/v1/chat/completions"))
			.timeout(WAIT)
			.header("X-API-Key", client)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(chatBody(false)))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** Slots the client holds on the route's only limit (its sorted set's members), as Redis has them. */
	private long slots(String route, String client) {
		return this.redis.sync().zcard(key(route, client));
	}

	private boolean exists(String route, String client) {
		return this.redis.sync().exists(key(route, client)) > 0;
	}

	/**
	 * The concurrency limit's key (docs/algorithms.md, Redis keys): numbered among the route's limits that count
	 * requests (a token limit's key is marked apart), the number left out for the first of them, which each route
	 * here has. The client is its X-API-Key, a credential, hashed without a secret (none is set) where it enters
	 * the limiter.
	 */
	private static String key(String route, String client) {
		return "wrl:{" + new ClientKeyHash(null).of(client) + "}:" + route + ":cc";
	}

	private static void await(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as(what).isLessThan(deadline);
			GatewayJar.sleep(20);
		}
	}

}
