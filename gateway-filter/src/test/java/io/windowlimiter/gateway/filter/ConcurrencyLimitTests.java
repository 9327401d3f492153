package io.windowlimiter.gateway.filter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code algorithm: concurrency} on the WindowRateLimit filter, in a real gateway with a real Redis and a real
 * downstream that holds every request until the test lets it answer: at most the limit reach the downstream at
 * once, the rest are refused with 429 and a Retry-After of 1 s; a slot frees when its response ends, also when
 * the client goes away mid-stream; two gateway instances sharing one Redis hold the limit together. (The limit held
 * and a slot freed once its response completes, or the downstream fails, are {@code WindowRateLimitFilterContract}'s.)
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConcurrencyLimitTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	static final HeldDownstream downstream = new HeldDownstream();

	static final FakeLlmServer llm = FakeLlmServer.start();

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	@Autowired
	private RateLimiterCore core;

	@Autowired
	private Environment environment;

	private final String apiKey = UUID.randomUUID().toString();

	/** The routes, as {@code name=value}: for this context and a second instance alike. */
	static List<String> routes() {
		List<String> properties = new ArrayList<>();
		String conc = ROUTES + "[0].";
		properties.add(conc + "id=conc");
		properties.add(conc + "uri=" + downstream.uri());
		properties.add(conc + "predicates[0]=Path=/conc/**");
		properties.add(conc + "filters[0].name=WindowRateLimit");
		properties.add(conc + "filters[0].args.key-resolver=#{@headerKeyResolver}");
		properties.add(conc + "filters[0].args.algorithm=concurrency");
		properties.add(conc + "filters[0].args.limit=2");
		properties.add(conc + "filters[0].args.window=30s");
		String mixed = ROUTES + "[1].";
		properties.add(mixed + "id=mixed");
		properties.add(mixed + "uri=" + downstream.uri());
		properties.add(mixed + "predicates[0]=Path=/mixed/**");
		properties.add(mixed + "filters[0].name=WindowRateLimit");
		properties.add(mixed + "filters[0].args.key-resolver=#{@headerKeyResolver}");
		properties.add(mixed + "filters[0].args.limits[0].limit=3");
		properties.add(mixed + "filters[0].args.limits[0].window=366d");
		properties.add(mixed + "filters[0].args.limits[1].algorithm=concurrency");
		properties.add(mixed + "filters[0].args.limits[1].limit=2");
		properties.add(mixed + "filters[0].args.limits[1].window=10m");
		String chat = ROUTES + "[2].";
		properties.add(chat + "id=chat");
		properties.add(chat + "uri=" + llm.baseUrl());
		properties.add(chat + "predicates[0]=Path=/v1/**");
		properties.add(chat + "filters[0].name=WindowRateLimit");
		properties.add(chat + "filters[0].args.key-resolver=#{@headerKeyResolver}");
		properties.add(chat + "filters[0].args.llm=openai");
		properties.add(chat + "filters[0].args.limits[0].limit=100000");
		properties.add(chat + "filters[0].args.limits[0].window=1m");
		properties.add(chat + "filters[0].args.limits[0].unit=tokens");
		properties.add(chat + "filters[0].args.limits[1].algorithm=concurrency");
		properties.add(chat + "filters[0].args.limits[1].limit=1");
		properties.add(chat + "filters[0].args.limits[1].window=1m");
		return properties;
	}

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		for (String property : routes()) {
			String[] pair = property.split("=", 2);
			registry.add(pair[0], () -> pair[1]);
		}
	}

	@BeforeEach
	void freshDownstream() {
		downstream.reset();
	}

	@AfterEach
	void letEverythingEnd() {
		downstream.open();
	}

	@AfterAll
	static void stop() {
		downstream.close();
		llm.close();
	}

	private WebClient client(int port) {
		return WebClient.create("http://127.0.0.1:" + port);
	}

	private int port() {
		return this.environment.getProperty("local.server.port", Integer.class);
	}

	/** A request answered when the downstream is opened; its status and Retry-After, as "429 1". */
	private Mono<String> get(WebClient client, String path) {
		return client.get()
			.uri(path)
			.header("X-API-Key", this.apiKey)
			.exchangeToMono(response -> response.bodyToMono(String.class)
				.defaultIfEmpty("")
				.thenReturn(response.statusCode().value() + " "
						+ response.headers().asHttpHeaders().getFirst("Retry-After")));
	}

	/** The client's requests in flight on the route, as Redis holds them (the endpoint's read). */
	private long inFlight(String route, long limit) {
		return inFlight(route, 0, limit);
	}

	/** As {@link #inFlight(String, long)}, for the route's limit at this index. */
	private long inFlight(String route, int index, long limit) {
		return limit - this.core.peek(route, this.apiKey).block(WAIT).decisions().get(index).remaining();
	}

	private static void await(String what, BooleanSupplier condition) throws InterruptedException {
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as(what).isLessThan(deadline);
			Thread.sleep(20);
		}
	}

	@Test
	void aClientThatGoesAwayMidStreamFreesItsSlot() throws InterruptedException {
		WebClient client = client(port());
		AtomicInteger started = new AtomicInteger();
		List<Disposable> streams = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			streams.add(stream(client).subscribe(chunk -> started.incrementAndGet()));
		}
		await("both streams started", () -> started.get() == 2);
		assertThat(get(client, "/conc/third").block(WAIT)).isEqualTo("429 1");
		// the client hangs up one stream: the gateway's exchange is cancelled and its slot released
		streams.get(0).dispose();
		await("the slot of the stream given up released", () -> inFlight("conc", 2) == 1);
		await("the downstream saw it end", () -> downstream.inFlight() == 1);
		// an error is printed: a CI run once waited here in vain with nothing to say why (refused, or a hung connection)
		streams.add(stream(client).subscribe(chunk -> started.incrementAndGet(),
				error -> System.out.println("the new stream failed: " + error)));
		await("a new stream started", () -> started.get() == 3);
		assertThat(downstream.maxInFlight()).isEqualTo(2);
		streams.forEach(Disposable::dispose);
		await("all released", () -> inFlight("conc", 2) == 0);
	}

	/** A streaming request whose first event arrives at once; the rest when the downstream is opened. */
	private Flux<String> stream(WebClient client) {
		return client.get()
			.uri("/conc/stream")
			.header("X-API-Key", this.apiKey)
			.retrieve()
			.bodyToFlux(String.class);
	}

	@Test
	void aRequestARateLimitRefusesTakesNoSlotAndARefusalByTheSlotsCountsNoRate() throws InterruptedException {
		WebClient client = client(port());
		Queue<String> answers = new ConcurrentLinkedQueue<>();
		Disposable held = Flux.range(0, 2).flatMap(i -> get(client, "/mixed/slow"), 2).subscribe(answers::add);
		await("two held", () -> downstream.inFlight() == 2);
		// refused by the slots: the rate limit (3 a year) counts it not
		assertThat(get(client, "/mixed/third").block(WAIT)).isEqualTo("429 1");
		downstream.open();
		await("the two answered", () -> answers.size() == 2);
		held.dispose();
		await("both slots released", () -> inFlight("mixed", 1, 2) == 0);
		assertThat(get(client, "/mixed/third").block(WAIT)).isEqualTo("200 null");
		// the rate limit is used up: refused by it, the request takes no slot
		await("the third's slot released", () -> inFlight("mixed", 1, 2) == 0);
		assertThat(get(client, "/mixed/fourth").block(WAIT)).startsWith("429");
		assertThat(inFlight("mixed", 1, 2)).isZero();
		assertThat(downstream.hits()).isEqualTo(3);
	}

	@Test
	void anLlmStreamHoldsItsSlotUntilItsLastEventAndThenFreesIt() throws InterruptedException {
		WebClient client = client(port());
		Queue<String> events = new ConcurrentLinkedQueue<>();
		AtomicInteger ended = new AtomicInteger();
		// six deltas 300 ms apart: the stream lasts about two seconds
		Disposable stream = chat(client, true).subscribe(events::add, error -> ended.incrementAndGet(),
				ended::incrementAndGet);
		await("the stream's first event", () -> !events.isEmpty());
		assertThat(chat(client, false).collectList().block(WAIT)).as("a second call while it streams")
			.containsExactly("429 1");
		assertThat(inFlight("chat", 1, 1)).isEqualTo(1);
		await("the stream ended", () -> ended.get() == 1);
		stream.dispose();
		await("its slot released", () -> inFlight("chat", 1, 1) == 0);
		assertThat(chat(client, false).collectList().block(WAIT)).hasSize(1).allMatch(answer -> answer.startsWith("200"));
	}

	/** A chat call: a stream's events as they come, or a call's status and Retry-After as "429 1". */
	private Flux<String> chat(WebClient client, boolean stream) {
		WebClient.RequestHeadersSpec<?> call = client.post()
			.uri("/v1/chat/completions")
			.header("X-API-Key", this.apiKey)
			.header(FakeLlmServer.HEADER_DELAY_MS, "300")
			.header(FakeLlmServer.HEADER_DELTAS, "6")
			.header("Content-Type", "application/json")
			.bodyValue("{\"model\":\"gpt-4.1\",\"stream\":" + stream
					+ ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
		if (stream) {
			return call.retrieve().bodyToFlux(String.class);
		}
		return call.exchangeToMono(response -> response.bodyToMono(String.class)
			.defaultIfEmpty("")
			.thenReturn(response.statusCode().value() + " " + response.headers().asHttpHeaders().getFirst("Retry-After")))
			.flux();
	}

	@Test
	@Order(Integer.MAX_VALUE)
	void twoInstancesSharingOneRedisHoldTheLimitTogether() throws InterruptedException {
		List<String> properties = new ArrayList<>(routes());
		properties.add("server.port=0");
		properties.add("spring.data.redis.host=" + RedisTestServer.get().host());
		properties.add("spring.data.redis.port=" + RedisTestServer.get().port());
		try (ConfigurableApplicationContext second = new SpringApplicationBuilder(GatewayTestApplication.class)
			.properties(properties.toArray(String[]::new))
			.run()) {
			int otherPort = ((WebServerApplicationContext) second).getWebServer().getPort();
			WebClient one = client(port());
			WebClient two = client(otherPort);
			Queue<String> answers = new ConcurrentLinkedQueue<>();
			Disposable all = Flux.range(0, 10)
				.flatMap(i -> get((i % 2 == 0) ? one : two, "/conc/both"), 10)
				.subscribe(answers::add);
			await("eight refusals across both instances", () -> answers.size() == 8);
			assertThat(answers).containsOnly("429 1");
			assertThat(downstream.inFlight()).isEqualTo(2);
			downstream.open();
			await("the two held answered", () -> answers.size() == 10);
			all.dispose();
			assertThat(downstream.maxInFlight()).isEqualTo(2);
			assertThat(downstream.hits()).isEqualTo(2);
		}
	}

	/**
	 * A real HTTP server that holds every request until {@link #open()}: {@code /stream} paths send a first
	 * event at once and end when opened; others answer when opened. It counts requests in flight, and the most
	 * at once.
	 */
	static final class HeldDownstream implements AutoCloseable {

		private final AtomicInteger inFlight = new AtomicInteger();

		private final AtomicInteger maxInFlight = new AtomicInteger();

		private final AtomicInteger hits = new AtomicInteger();

		private volatile Sinks.Empty<Void> gate = Sinks.empty();

		private final LoopResources loops = LoopResources.create("held-downstream", 1, true);

		private final DisposableServer server;

		HeldDownstream() {
			// loops of its own: closing the second gateway's context disposes Reactor Netty's global ones
			this.server = HttpServer.create().runOn(this.loops).host("127.0.0.1").port(0).handle((request, response) -> {
				this.hits.incrementAndGet();
				this.maxInFlight.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
				Mono<Void> opened = this.gate.asMono();
				boolean stream = request.uri().contains("stream");
				Flux<String> body = stream
						? Flux.concat(Mono.just("data: first\n\n"), opened.then(Mono.just("data: last\n\n")))
						: opened.then(Mono.just("done")).flux();
				return response.header("Content-Type", stream ? "text/event-stream" : "text/plain")
					.sendString(body.publishOn(Schedulers.parallel()).doFinally(signal -> this.inFlight.decrementAndGet()));
			}).bindNow();
		}

		String uri() {
			return "http://127.0.0.1:" + this.server.port();
		}

		void reset() {
			this.gate = Sinks.empty();
			this.hits.set(0);
			this.maxInFlight.set(0);
		}

		void open() {
			this.gate.tryEmitEmpty();
		}

		int inFlight() {
			return this.inFlight.get();
		}

		int maxInFlight() {
			return this.maxInFlight.get();
		}

		int hits() {
			return this.hits.get();
		}

		@Override
		public void close() {
			this.server.disposeNow();
			this.loops.dispose();
		}

	}

}
