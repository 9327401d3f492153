package io.windowlimiter.app.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hot clients admitted from leased parts of their quota ({@code lease}, docs/hot-clients.md), through two packaged
 * jars on one {@code redis-server}: one client key sent over keep-alive connections spread over both instances, as
 * a load balancer would. Redis runs a fraction of a script per request, the instances together admit no more than
 * the limit, and once the parts ended Redis counts exactly what was admitted.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LeaseCases {

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private final JarPair pair;

	LeaseCases(JarPair pair) {
		this.pair = pair;
	}

	static void routes(RouteFile routes) {
		// RequestRateLimiter routes: window-rate-limiter.lease
		// a part is a lease time of the client's traffic: 200 ms keeps parts of a few dozen at the rates a loaded
		// test machine reaches
		routes.route("lease-hot", RouteFile.with(RouteFile.limit("fixed-window", 1_000_000, "1h"), "lease", "200ms"));
		// the WindowRateLimit filter: lease
		routes.windowRateLimit("lease-exact", List.of(Map.of("key-resolver", "#{@headerKeyResolver}",
				"algorithm", "fixed-window", "limit", 300, "window", "1h", "lease", "50ms")));
	}

	/**
	 * Sends {@code each} requests of {@code apiKey} on each of {@code connections} keep-alive connections, spread
	 * over both jars, all connections at once.
	 * @return how many were answered 200 (the rest 429)
	 */
	private long flood(String path, String apiKey, int connections, int each) throws Exception {
		AtomicLong passed = new AtomicLong();
		ExecutorService pool = Executors.newFixedThreadPool(connections);
		try {
			List<Future<?>> running = new ArrayList<>();
			for (int c = 0; c < connections; c++) {
				GatewayJar gateway = this.pair.both().get(c % 2);
				running.add(pool.submit(() -> {
					try (KeepAliveConnection connection = KeepAliveConnection.open(gateway.port(), Duration.ofSeconds(10))) {
						for (int i = 0; i < each; i++) {
							int status = connection.get(path, apiKey).status();
							assertThat(status).isIn(200, 429);
							if (status == 200) {
								passed.incrementAndGet();
							}
						}
					}
					return null;
				}));
			}
			for (Future<?> connection : running) {
				connection.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
		return passed.get();
	}

	/** What the client has left of the route's limit, as the ratelimits endpoint reads it in Redis. */
	private long remaining(String route, String apiKey) throws Exception {
		GatewayJar.Probe standing = this.pair.a().get("/actuator/ratelimits/" + route + "/" + apiKey,
				Duration.ofSeconds(10));
		assertThat(standing.status()).as(standing.toString()).isEqualTo(200);
		return JsonMapper.shared().readTree(standing.body()).path("limits").get(0).path("remaining").asLong();
	}

	@Test
	void aHotClientCostsRedisATenthOfAScriptPerRequestAndRedisCountsWhatWasAdmitted() throws Exception {
		String apiKey = "hot-" + this.run;
		// the client becomes hot on both instances (a lease time of counting), and their JITs warm: a second of it
		long warm = 0;
		long until = System.nanoTime() + Duration.ofSeconds(1).toNanos();
		while (System.nanoTime() < until) {
			assertThat(flood("/lease-hot/get", apiKey, 8, 25)).isEqualTo(8 * 25);
			warm += 8 * 25;
		}
		int requests = 8 * 500;
		long before = RedisInfo.scriptCalls(this.pair.redisPort());
		assertThat(flood("/lease-hot/get", apiKey, 8, 500)).isEqualTo(requests);
		long scripts = RedisInfo.scriptCalls(this.pair.redisPort()) - before;
		System.out.printf("lease-hot: %d requests, %d scripts (%.3f per request)%n", requests, scripts,
				(double) scripts / requests);
		assertThat(scripts).as("scripts for %d requests", requests).isLessThanOrEqualTo(requests / 10);
		// every part ends within its 200 ms; what a part did not admit went back
		GatewayJar.sleep(600);
		assertThat(remaining("lease-hot", apiKey)).isEqualTo(1_000_000 - warm - requests);
	}

	@Test
	void theInstancesTogetherAdmitNoMoreThanTheLimitAndNearlyAllOfIt() throws Exception {
		String apiKey = "exact-" + this.run;
		long passed = flood("/lease-exact/get", apiKey, 8, 100);
		System.out.printf("lease-exact: %d of 800 admitted at a limit of 300%n", passed);
		assertThat(passed).isLessThanOrEqualTo(300).isGreaterThanOrEqualTo(285);
		GatewayJar.sleep(300);
		assertThat(remaining("lease-exact", apiKey)).isEqualTo(300 - passed);
	}

}
