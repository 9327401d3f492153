package io.windowlimiter.gateway.filter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.HeldRequests;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.ScriptedDownstream;
import io.windowlimiter.gateway.test.TestRoutes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code max-delay} on the {@code WindowRateLimit} filter, in a gateway from properties with a real Redis and a
 * real downstream that notes when each request reached it: held requests reach it no sooner than their slot,
 * the rest are refused; a held request's reservation is settled after its response like any other, the
 * refund from the window or bucket time it was counted in; several holding filters hold in turn; a client
 * gone while held. Redis and the downstream share this machine's clock.
 */
@SpringBootTest(classes = { GatewayTestApplication.class, WindowRateLimitMaxDelayTests.Meters.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class WindowRateLimitMaxDelayTests {

	static final ScriptedDownstream downstream = ScriptedDownstream.start();

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	/** Every status but 5xx counts: an upstream error is refunded. */
	private static final String NOT_5XX = "1xx,2xx,3xx,4xx";

	@Value("${local.server.port}")
	private int port;

	@Autowired
	private MeterRegistry meters;

	/** A registry of our own: this test's class path has no metrics auto-configuration. */
	@Configuration(proxyBeanMethods = false)
	static class Meters {

		@Bean
		SimpleMeterRegistry meters() {
			return new SimpleMeterRegistry();
		}

	}

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		TestRoutes.redis(registry);
		// 3 a second, in windows aligned on the epoch's seconds; the next window's 3 held for it
		route(registry, 0, "held", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm",
				"fixed-window", "limit", "3", "window", "1s", "max-delay", "1s")));
		// one a second, one at once, held up to 3 s; upstream errors refunded
		route(registry, 1, "bucket", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm",
				"token-bucket", "limit", "1", "window", "1s", "burst", "1", "max-delay", "3s", "count-statuses", NOT_5XX)));
		route(registry, 2, "window", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm",
				"fixed-window", "limit", "2", "window", "1s", "max-delay", "1s", "count-statuses", NOT_5XX)));
		// per key one every 500 ms, per IP (every test request's is the same) one a second; both hold
		route(registry, 3, "both", List.of(
				Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm", "token-bucket", "limit", "2", "window",
						"1s", "burst", "1", "max-delay", "2s"),
				Map.of("id", "ip", "key-resolver", "#{@clientIpKeyResolver}", "algorithm", "token-bucket", "limit",
						"1", "window", "1s", "burst", "1", "max-delay", "2s")));
		route(registry, 4, "gone", List.of(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm",
				"token-bucket", "limit", "1", "window", "1s", "burst", "1", "max-delay", "3s")));
	}

	/** Route {@code /<id>/**} to the downstream with one WindowRateLimit filter per map of arguments. */
	static void route(DynamicPropertyRegistry registry, int index, String id, List<Map<String, String>> filters) {
		String route = ROUTES + "[" + index + "]";
		registry.add(route + ".id", () -> id);
		registry.add(route + ".uri", downstream::uri);
		registry.add(route + ".predicates[0]", () -> "Path=/" + id + "/**");
		for (int i = 0; i < filters.size(); i++) {
			String filter = route + ".filters[" + i + "]";
			registry.add(filter + ".name", () -> "WindowRateLimit");
			filters.get(i).forEach((name, value) -> registry.add(filter + ".args." + name, () -> value));
		}
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	/** A request with this API key and headers ({@code name, value} pairs), sent when subscribed to. */
	private Mono<ResponseEntity<String>> send(String path, String apiKey, String... headers) {
		return WebClient.create("http://127.0.0.1:" + this.port).get().uri(path).headers(h -> {
			h.set("X-API-Key", apiKey);
			for (int i = 0; i < headers.length; i += 2) {
				h.set(headers[i], headers[i + 1]);
			}
		}).exchangeToMono(response -> response.toEntity(String.class));
	}

	private ResponseEntity<String> get(String path, String apiKey, String... headers) {
		return send(path, apiKey, headers).block(TIMEOUT);
	}

	/** The first arrival of this path at the downstream, in ms since the epoch. */
	private static long arrival(String path) {
		List<Long> arrivals = downstream.arrivals(path);
		assertThat(arrivals).as(path + " reached the downstream once").hasSize(1);
		return arrivals.get(0);
	}

	/**
	 * The start of a fresh second, 20 ms in (fixed windows of 1 s are aligned on the epoch's seconds), after
	 * one request on the route from a key of its own: the route's first request pays for warming up.
	 */
	private long freshSecond(String route) throws InterruptedException {
		assertThat(get("/" + route + "/warm", UUID.randomUUID().toString()).getStatusCode().value()).isEqualTo(200);
		long now = System.currentTimeMillis();
		long start = (now / 1_000 + 1) * 1_000;
		Thread.sleep(start + 20 - now);
		return start;
	}

	@Test
	void aBurstBeyondTheLimitIsHeldForTheNextWindowAndTheRestRefused() throws InterruptedException {
		String apiKey = UUID.randomUUID().toString();
		long window = freshSecond("held");
		List<Mono<ResponseEntity<String>>> burst = new ArrayList<>();
		for (int i = 0; i < 9; i++) {
			burst.add(send("/held/a?n=" + i, apiKey));
		}
		List<ResponseEntity<String>> answers = Flux.merge(burst).collectList().block(TIMEOUT);

		List<ResponseEntity<String>> passed = answers.stream().filter(a -> a.getStatusCode().value() == 200).toList();
		List<ResponseEntity<String>> refused = answers.stream().filter(a -> a.getStatusCode().value() == 429).toList();
		assertThat(passed).hasSize(6);
		assertThat(refused).hasSize(3);
		for (ResponseEntity<String> answer : passed) {
			// held or not, the usual headers
			assertThat(answer.getHeaders().getFirst("X-RateLimit-Limit")).isEqualTo("3");
			assertThat(answer.getHeaders().getFirst("X-RateLimit-Remaining")).isNotNull();
			assertThat(answer.getHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"held\";q=3;w=1");
		}
		for (ResponseEntity<String> answer : refused) {
			// a retry could be held from the next window on (its slot, the window after, minus the max-delay)
			assertThat(answer.getHeaders().getFirst("Retry-After")).isEqualTo("1");
			assertThat(answer.getHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		}
		List<Long> arrivals = new ArrayList<>();
		for (int i = 0; i < 9; i++) {
			arrivals.addAll(downstream.arrivals("/held/a?n=" + i));
		}
		arrivals.sort(null);
		assertThat(arrivals).hasSize(6);
		// three in this window, three held for the next and none of them early
		assertThat(arrivals.subList(0, 3)).allMatch(at -> at < window + 1_000);
		assertThat(arrivals.subList(3, 6)).allMatch(at -> at >= window + 1_000);
	}

	@Test
	void aHeldTokenBucketRequestRefundedLateGivesBackNoTimeTheClientNoLongerOwed() throws InterruptedException {
		assertThat(get("/bucket/warm", UUID.randomUUID().toString()).getStatusCode().value()).isEqualTo(200);
		String apiKey = UUID.randomUUID().toString();
		long sent = System.currentTimeMillis();
		// a takes the bucket's one token; b is held to its slot, a second on, c to two seconds on
		assertThat(get("/bucket/a", apiKey).getStatusCode().value()).isEqualTo(200);
		// b's upstream fails 1100 ms after b reached it: refunded when its second of refill has passed, so
		// nothing of it is owed any more
		Mono<ResponseEntity<String>> b = send("/bucket/b", apiKey, ScriptedDownstream.STATUS, "503",
				ScriptedDownstream.DELAY, "1100").cache();
		b.subscribe();
		Thread.sleep(200);
		Mono<ResponseEntity<String>> c = send("/bucket/c", apiKey).cache();
		c.subscribe();
		ResponseEntity<String> failed = b.block(TIMEOUT);
		assertThat(failed.getStatusCode().value()).isEqualTo(503);
		// a bucket's limit header is its burst
		assertThat(failed.getHeaders().getFirst("X-RateLimit-Limit")).isEqualTo("1");
		assertThat(arrival("/bucket/b")).isGreaterThanOrEqualTo(sent + 1_000);

		// so the bucket stays where c left it: d's slot is three seconds on. (Reading b's hold as part of its
		// reservation would give back most of a second: d would pass about when b failed, 2.1 s on.)
		assertThat(get("/bucket/d", apiKey).getStatusCode().value()).isEqualTo(200);
		assertThat(c.block(TIMEOUT).getStatusCode().value()).isEqualTo(200);
		assertThat(arrival("/bucket/c")).isGreaterThanOrEqualTo(sent + 2_000);
		assertThat(arrival("/bucket/d")).isGreaterThanOrEqualTo(sent + 3_000);
	}

	@Test
	void aHeldFixedWindowRequestRefundedGivesBackToTheWindowItWasHeldFor() throws InterruptedException {
		String apiKey = UUID.randomUUID().toString();
		long window = freshSecond("window");
		assertThat(get("/window/a", apiKey).getStatusCode().value()).isEqualTo(200);
		assertThat(get("/window/b", apiKey).getStatusCode().value()).isEqualTo(200);
		// held for the next window, then the upstream fails: refunded from that window
		ResponseEntity<String> failed = get("/window/c", apiKey, ScriptedDownstream.STATUS, "500");
		assertThat(failed.getStatusCode().value()).isEqualTo(500);
		assertThat(arrival("/window/c")).isGreaterThanOrEqualTo(window + 1_000);

		// so that window still has room for two, at once
		ResponseEntity<String> d = get("/window/d", apiKey);
		ResponseEntity<String> e = get("/window/e", apiKey);
		assertThat(d.getHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(e.getHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(arrival("/window/d")).isLessThan(window + 2_000);
		assertThat(arrival("/window/e")).isLessThan(window + 2_000);
	}

	@Test
	void severalHoldingFiltersHoldInTurn() {
		String apiKey = UUID.randomUUID().toString();
		long sent = System.currentTimeMillis();
		List<Mono<ResponseEntity<String>>> three = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			three.add(send("/both/a?n=" + i, apiKey));
		}
		List<ResponseEntity<String>> answers = Flux.merge(three).collectList().block(TIMEOUT);
		assertThat(answers).allMatch(answer -> answer.getStatusCode().value() == 200);
		List<Long> arrivals = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			arrivals.add(arrival("/both/a?n=" + i));
		}
		arrivals.sort(null);
		// the key's filter alone would pass them 500 ms apart; the IP's, deciding each after the key's hold,
		// a second apart
		assertThat(arrivals.get(1)).isGreaterThanOrEqualTo(sent + 1_000);
		assertThat(arrivals.get(2)).isGreaterThanOrEqualTo(sent + 2_000);
	}

	@Test
	void aClientGoneWhileHeldReturnsItsLeaveAndItsSlotStaysSpent() throws InterruptedException {
		assertThat(get("/gone/warm", UUID.randomUUID().toString()).getStatusCode().value()).isEqualTo(200);
		String apiKey = UUID.randomUUID().toString();
		long sent = System.currentTimeMillis();
		assertThat(get("/gone/a", apiKey).getStatusCode().value()).isEqualTo(200);
		// held about a second, for its slot; the client hangs up after 300 ms
		Disposable b = send("/gone/b", apiKey).subscribe();
		Thread.sleep(300);
		assertThat(held()).as("b held").isEqualTo(1);
		b.dispose();
		long deadline = System.currentTimeMillis() + 2_000;
		while (held() > 0 && System.currentTimeMillis() < deadline) {
			Thread.sleep(5);
		}
		assertThat(held()).as("b's leave returned").isZero();
		assertThat(System.currentTimeMillis()).as("before its slot").isLessThan(sent + 1_000);

		// its slot, a second on, stays spent: c's is two seconds on, and b never went downstream
		assertThat(get("/gone/c", apiKey).getStatusCode().value()).isEqualTo(200);
		assertThat(arrival("/gone/c")).isGreaterThanOrEqualTo(sent + 2_000);
		assertThat(downstream.hits("/gone/b")).isZero();
	}

	private double held() {
		return this.meters.get(HeldRequests.GAUGE).gauge().value();
	}

}
