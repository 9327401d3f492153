package io.windowlimiter.core;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Near the limit: counted by route for each allowed request that leaves its client at or beyond the share
 * of a limit, decided by a real Redis; logged at most once per interval; nothing allocated on the way.
 */
@ExtendWith(OutputCaptureExtension.class)
class NearLimitTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final String run = Long.toString(System.nanoTime(), 36);

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private RateLimiterCore core(NearLimit nearLimit) {
		RateLimiterCore core = RateLimiterCore.of(new LimitScript(RedisTestServer.get().template()),
				new RedisGuard(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(10)),
				new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(this.meters),
				Clock.systemUTC());
		core.setNearLimit(nearLimit);
		return core;
	}

	private double nearLimit(String route) {
		return this.meters.find("gateway.ratelimit.near_limit").tags("route", route).counters().stream()
			.mapToDouble(counter -> counter.count()).sum();
	}

	/** Each request's status, and the near-limit count after it. */
	private List<String> send(RateLimiterCore core, String route, String client, int requests) {
		List<String> seen = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			Admission admission = core.admit(route, client, Mono.empty()).block(WAIT);
			assertThat(admission.headers()).as("decided by Redis, not by the fail-mode").isNotEmpty();
			seen.add((admission.passes() ? "ok" : "no") + "/" + (long) nearLimit(route));
		}
		return seen;
	}

	@Test
	void fromTheShareOfALimitEachAllowedRequestCountsAndRefusalsDoNot() {
		RateLimiterCore core = core(new NearLimit(0.8, new RateLimitMetrics(this.meters), null));
		String route = "near-" + this.run;
		core.configure(route, Map.of("window-rate-limiter.algorithm", "sliding-log", "window-rate-limiter.limit", "10",
				"window-rate-limiter.window", "1h"));
		// 8 of 10 used after the 8th: counted from there
		assertThat(send(core, route, "alice", 12)).containsExactly("ok/0", "ok/0", "ok/0", "ok/0", "ok/0", "ok/0",
				"ok/0", "ok/1", "ok/2", "ok/3", "no/3", "no/3");
		assertThat(send(core, route, "bob", 3)).as("per request, not per client").containsExactly("ok/3", "ok/3", "ok/3");
	}

	/** A token bucket's share is of its burst, the most it holds; several limits near count a request once. */
	@Test
	void aTokenBucketCountsFromItsBurstAndARequestCountsOnceWhateverTheLimits() {
		RateLimiterCore core = core(new NearLimit(0.5, new RateLimitMetrics(this.meters), null));
		String bucket = "bucket-" + this.run;
		core.configure(bucket, Map.of("window-rate-limiter.algorithm", "token-bucket", "window-rate-limiter.limit", "100",
				"window-rate-limiter.window", "1h", "window-rate-limiter.burst", "4"));
		assertThat(send(core, bucket, "carol", 5)).containsExactly("ok/0", "ok/1", "ok/2", "ok/3", "no/3");
		String two = "two-" + this.run;
		core.configure(two, Map.of("window-rate-limiter.algorithm", "fixed-window", "window-rate-limiter.limits[0].limit",
				"4", "window-rate-limiter.limits[0].window", "1h", "window-rate-limiter.limits[1].limit", "6",
				"window-rate-limiter.limits[1].window", "2h"));
		assertThat(send(core, two, "dave", 4)).containsExactly("ok/0", "ok/1", "ok/2", "ok/3");
	}

	@Test
	void aLineIsLoggedAtMostOncePerIntervalNamingRouteLimitAndAShortenedClient(CapturedOutput output)
			throws InterruptedException {
		RateLimiterCore core = core(new NearLimit(0.5, new RateLimitMetrics(this.meters), Duration.ofHours(1)));
		String route = "logged-" + this.run;
		core.configure(route, Map.of("window-rate-limiter.algorithm", "sliding-log", "window-rate-limiter.limit", "4",
				"window-rate-limiter.window", "1h", "window-rate-limiter.name", "hourly"));
		String hostile = "key\r\nFAKE LOG LINE " + "x".repeat(8_000);
		// lines are written on the log's thread: the other tests' first, then only this one's
		OccasionalLogTests.awaitWritten();
		int before = output.getAll().length();
		send(core, route, hostile, 4);
		send(core, route, "other", 4);
		OccasionalLogTests.awaitWritten();
		String logged = output.getAll().substring(before);
		assertThat(logged.lines().filter(line -> line.contains("is near limit"))).hasSize(1);
		assertThat(logged).contains("Client 'key__FAKE_LO...' (sha256 ").contains(", 8019 chars) is near limit 'hourly' "
				+ "on route '" + route + "': 2 of 4 left (at most one such line per PT1H)");
		assertThat(logged).doesNotContain("\nFAKE LOG LINE").doesNotContain("xxxxxxxxxxxxxxxxxxxx");
		assertThat(nearLimit(route)).as("counted every time, logged once").isEqualTo(6);
	}

	/** The line is made and written off the request's thread: a log that blocks holds no request. */
	@Test
	void aLogWriteThatBlocksDoesNotHoldTheRequest() throws InterruptedException {
		try (BlockingLog log = BlockingLog.on(NearLimit.class)) {
			NearLimit nearLimit = new NearLimit(0.5, new RateLimitMetrics(this.meters), Duration.ofMillis(1));
			List<RouteLimit> limits = List.of(new RouteLimit("a", new WindowPolicy(Algorithm.FIXED_WINDOW, 10,
					Duration.ofMinutes(1), 10), null));
			long started = System.nanoTime();
			for (int i = 0; i < 3; i++) {
				nearLimit.allowed("r", limits, List.of(new Decision(true, 1, 0, 0)), "client-" + i);
				Thread.sleep(2);
			}
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("three near-limit requests, the log blocked")
				.isLessThan(Duration.ofMillis(500));
			log.release();
			assertThat(log.written(Duration.ofSeconds(5))).as("the line written once the log is free").isTrue();
		}
	}

	@Test
	void shortPrintableKeysAreLoggedAsTheyAre() {
		assertThat(NearLimit.printable("203.0.113.7")).isEqualTo("'203.0.113.7'");
		assertThat(NearLimit.printable("it's")).startsWith("'it_s...' (sha256 ");
	}

	/** On the request path: below the share, and counted, nothing is allocated. */
	@Test
	void observingAllocatesNothing() {
		NearLimit nearLimit = new NearLimit(0.8, new RateLimitMetrics(this.meters), Duration.ofHours(1));
		List<RouteLimit> limits = List.of(new RouteLimit("a", new WindowPolicy(Algorithm.FIXED_WINDOW, 10,
				Duration.ofMinutes(1), 10), null), new RouteLimit("b", new WindowPolicy(Algorithm.TOKEN_BUCKET, 10,
				Duration.ofMinutes(1), 5), null));
		List<Decision> below = List.of(new Decision(true, 5, 0, 0), new Decision(true, 4, 0, 0));
		List<Decision> near = List.of(new Decision(true, 5, 0, 0), new Decision(true, 1, 0, 0));
		nearLimit.allowed("r", limits, near, "client");
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		for (int round = 0; round < 3; round++) {
			// warm up, so the JIT has compiled what is measured
			long before = threads.getCurrentThreadAllocatedBytes();
			for (int i = 0; i < 100_000; i++) {
				nearLimit.allowed("r", limits, below, "client");
				nearLimit.allowed("r", limits, near, "client");
			}
			long allocated = threads.getCurrentThreadAllocatedBytes() - before;
			if (round == 2) {
				assertThat(allocated).as("bytes for 200,000 observations").isLessThan(10_000);
			}
		}
		assertThat(nearLimit(("r"))).isEqualTo(300_001);
	}

	@Test
	void aShareOutsideZeroToOneIsRefusedNamingThePropertyAndWhatIsAllowed() {
		assertThat(NearLimit.checkShare("p", 1)).isEqualTo(1);
		for (double share : new double[] { 0, -0.5, 1.01, Double.NaN }) {
			assertThatThrownBy(() -> NearLimit.checkShare("window-rate-limiter.near-limit.share", share))
				.hasMessage("window-rate-limiter.near-limit.share is '" + share + "'; allowed: a share of a limit above 0 "
						+ "and at most 1, such as 0.8 (counts an allowed request that leaves its client at 80% of a limit "
						+ "or beyond)");
		}
	}

}
