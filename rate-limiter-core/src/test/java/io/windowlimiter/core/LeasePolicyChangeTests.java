package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An override starting and ending for a hot client holding a leased part, with counts in place and windows that
 * differ (the route's hour, the override's minute): the part goes back, the new policy decides at once with what
 * the client used, and no unit is lost or admitted twice.
 */
class LeasePolicyChangeTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final PlanAssignments assignments = new PlanAssignments(this.redis, Set.of(), Duration.ofMillis(250),
			10_000, Duration.ofSeconds(10), System::currentTimeMillis);

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final RateLimiterCore core = new RateLimiterCore(new LimitScript(this.redis), new PolicyRegistry(Map.of()),
			this.assignments, false, this.guard, new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(this.meters),
			Duration.ofSeconds(10), Clock.systemUTC());

	private final String client = "lease-change-" + UUID.randomUUID();

	private final String route = "leased-" + UUID.randomUUID();

	@AfterEach
	void close() {
		this.assignments.clear(this.route, this.client).block(TIMEOUT);
		this.guard.close();
	}

	private double local() {
		Counter counter = this.meters.find("gateway.ratelimit.leases.local").tag("route", this.route).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private Admission admit() {
		Admission admission = this.core.admit(this.route, this.client, Mono.empty()).block(TIMEOUT);
		assertThat(admission.passes()).isTrue();
		return admission;
	}

	/** Requests one after another until one is admitted from a part: this instance holds one. */
	private long hot() {
		double before = local();
		long sent = 0;
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (local() == before) {
			assertThat(System.nanoTime()).as("a part taken within 10 s").isLessThan(deadline);
			admit();
			sent++;
		}
		return sent;
	}

	/** Reads (at cost 0) until the core decides the client by a limit of {@code limit}. */
	private void awaitLimit(long limit) throws InterruptedException {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (this.core.peek(this.route, this.client).block(TIMEOUT).limits().get(0).policy().limit() != limit) {
			assertThat(System.nanoTime()).as("the assignment seen within 10 s").isLessThan(deadline);
			Thread.sleep(20);
		}
	}

	@Test
	void anOverrideOfAnotherWindowStartingAndEndingWithAPartHeldLosesAndRepeatsNothing() throws Exception {
		long minuteLeft = 60_000 - System.currentTimeMillis() % 60_000;
		if (minuteLeft < 15_000) {
			// the override's minute window must not roll over inside the test
			Thread.sleep(minuteLeft + 100);
		}
		this.core.configure(this.route, Map.of("window-rate-limiter.algorithm", "fixed-window",
				"window-rate-limiter.limit", "100000", "window-rate-limiter.window", "1h", "window-rate-limiter.lease", "1s"));
		long used = hot();

		// starts: the hour's part (held up to a second) goes back; the minute's window starts from the hour's count
		this.assignments.override(this.route, this.client, List.of(Map.of("limit", "50000", "window", "1m")), null)
			.block(TIMEOUT);
		awaitLimit(50_000);
		double before = local();
		Admission first = admit();
		used++;
		assertThat(local()).as("not from the hour's part").isEqualTo(before);
		assertThat(first.remaining()).as("the minute counts what the client used, the part given back")
			.isEqualTo(50_000 - used);

		// hot under the override, then it ends: the minute's part goes back, the hour holds every unit admitted
		used += hot();
		this.assignments.clear(this.route, this.client).block(TIMEOUT);
		awaitLimit(100_000);
		before = local();
		Admission back = admit();
		used++;
		assertThat(local()).as("not from the minute's part").isEqualTo(before);
		assertThat(back.remaining()).as("the hour counts what was admitted under both").isEqualTo(100_000 - used);
	}

}
