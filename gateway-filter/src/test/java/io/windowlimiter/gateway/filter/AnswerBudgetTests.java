package io.windowlimiter.gateway.filter;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.RedisProcess;
import io.windowlimiter.gateway.test.ScriptedDownstream;
import io.windowlimiter.gateway.test.SlowRedisProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review m5 (issue 44 item 5): the bound on an answer holds per answer, not per Redis call. A route with two
 * WindowRateLimit filters, each settling its reservation when the response starts (a 200 does not count: both
 * refund), in front of a Redis that answers every command, in order, just under the timeout (a proxy holds each
 * reply {@link #REPLY_DELAY}). Before, the two decisions and the two settles waited one after the other: over 2 s.
 * Now they share one budget, {@code redis-timeout} in all: the second filter gets what is left (then its
 * fail-mode), and the settles that cannot finish in what is left land after the response.
 */
@SpringBootTest(classes = { GatewayTestApplication.class, AnswerBudgetTests.Meters.class }, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		// the stall rule would take a Redis silent for 550 ms for a frozen one: here only the timeout may end a wait
		properties = "window-rate-limiter.redis-stall-timeout=600ms")
@AutoConfigureWebTestClient(timeout = "PT30S")
class AnswerBudgetTests {

	private static final Duration TIMEOUT = Duration.ofMillis(600);

	/** Each of Redis's replies comes this long after the command: just under the timeout. */
	private static final Duration REPLY_DELAY = Duration.ofMillis(550);

	/** The budget, one watchdog tick (a quarter of the stall timeout) and the gateway's own work on a busy machine. */
	private static final Duration ANSWER_WITHIN = TIMEOUT.plus(TIMEOUT.dividedBy(4)).plusMillis(250);

	static final RedisProcess redis = RedisProcess.launch();

	static final SlowRedisProxy proxy = SlowRedisProxy.to(redis.port());

	static final ScriptedDownstream downstream = ScriptedDownstream.start();

	@Autowired
	private WebTestClient client;

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
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", proxy::port);
		List<Map<String, String>> filters = List.of(
				Map.of("key-resolver", "#{@headerKeyResolver}", "limit", "100", "window", "366d", "count-statuses", "4xx"),
				Map.of("id", "ip", "key-resolver", "#{@clientIpKeyResolver}", "limit", "100", "window", "366d",
						"count-statuses", "4xx"));
		String route = "spring.cloud.gateway.server.webflux.routes[0]";
		registry.add(route + ".id", () -> "two");
		registry.add(route + ".uri", downstream::uri);
		registry.add(route + ".predicates[0]", () -> "Path=/two/**");
		for (int i = 0; i < filters.size(); i++) {
			String filter = route + ".filters[" + i + "]";
			registry.add(filter + ".name", () -> "WindowRateLimit");
			filters.get(i).forEach((name, value) -> registry.add(filter + ".args." + name, () -> value));
		}
	}

	@AfterAll
	static void stop() {
		proxy.close();
		redis.close();
		downstream.close();
	}

	@Test
	void twoFiltersAndTheirSettlesWaitForRedisNoLongerThanOneDecisionInAll() throws Exception {
		String apiKey = UUID.randomUUID().toString();
		// Redis answering at once: both filters decide, both headers' limits are Redis's
		assertThat(get(apiKey).getStatus().value()).isEqualTo(200);
		double appliedBefore = settles("applied");

		proxy.delay(REPLY_DELAY);
		long slowest = 0;
		for (int i = 0; i < 3; i++) {
			long start = System.nanoTime();
			EntityExchangeResult<byte[]> answer = get(apiKey);
			long took = System.nanoTime() - start;
			slowest = Math.max(slowest, took);
			System.out.println("[answer budget] two filters and their settles, Redis answering in " + REPLY_DELAY.toMillis()
					+ " ms: " + answer.getStatus().value() + " in " + took / 1_000_000 + " ms");
			assertThat(answer.getStatus().value()).isEqualTo(200);
		}
		assertThat(Duration.ofNanos(slowest)).as("the slowest answer").isLessThan(ANSWER_WITHIN);
		// the settles that did not fit land after the response: refunds are made, not dropped
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (settles("applied") < appliedBefore + 3 && System.nanoTime() < deadline) {
			Thread.sleep(50);
		}
		System.out.println("[answer budget] settles applied " + (settles("applied") - appliedBefore) + ", dropped "
				+ settles("dropped"));
		assertThat(settles("applied") - appliedBefore).as("the first filter's refunds, landed after the responses")
			.isGreaterThanOrEqualTo(3);
		proxy.delay(Duration.ZERO);
	}

	private EntityExchangeResult<byte[]> get(String apiKey) {
		return this.client.get().uri("/two/a").header("X-API-Key", apiKey).exchange().expectBody().returnResult();
	}

	private double settles(String result) {
		return this.meters.find("gateway.ratelimit.settles").tag("result", result).counters().stream()
			.mapToDouble(Counter::count)
			.sum();
	}

}
