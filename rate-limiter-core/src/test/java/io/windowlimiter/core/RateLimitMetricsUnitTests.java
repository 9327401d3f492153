package io.windowlimiter.core;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.RateLimitMetrics.Outcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The request path's meters are kept per route: each count lands on its own route, algorithm and outcome. */
class RateLimitMetricsUnitTests {

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final RateLimitMetrics metrics = new RateLimitMetrics(this.registry);

	@Test
	void decisionsAreCountedByRouteAlgorithmAndOutcome() {
		this.metrics.decision("a", "fixed-window", Outcome.ALLOWED);
		this.metrics.decision("a", "fixed-window", Outcome.ALLOWED);
		this.metrics.decision("a", "fixed-window", Outcome.DENIED);
		this.metrics.decision("a", "token-bucket", Outcome.ALLOWED);
		this.metrics.decision("b", "fixed-window", Outcome.ALLOWED);
		assertThat(decisions("a", "fixed-window", "allowed")).isEqualTo(2);
		assertThat(decisions("a", "fixed-window", "denied")).isEqualTo(1);
		assertThat(decisions("a", "token-bucket", "allowed")).isEqualTo(1);
		assertThat(decisions("b", "fixed-window", "allowed")).isEqualTo(1);
		assertThat(this.registry.find("gateway.ratelimit.decisions").tag("outcome", "error").counter())
			.as("registered on first use only")
			.isNull();
	}

	@Test
	void redisRoundTripsAreTimedByRouteAndResult() {
		this.metrics.stopRedis(this.metrics.startRedis(), "a", true);
		this.metrics.stopRedis(this.metrics.startRedis(), "a", true);
		this.metrics.stopRedis(this.metrics.startRedis(), "a", false);
		this.metrics.stopRedis(this.metrics.startRedis(), "b", true);
		assertThat(roundTrips("a", "success")).isEqualTo(2);
		assertThat(roundTrips("a", "failure")).isEqualTo(1);
		assertThat(roundTrips("b", "success")).isEqualTo(1);
		assertThat(this.registry.find("gateway.ratelimit.redis").tag("route", "b").tag("result", "failure").timer())
			.isNull();
	}

	@Test
	void nearLimitIsCountedByRoute() {
		this.metrics.nearLimit("a");
		this.metrics.nearLimit("a");
		this.metrics.nearLimit("b");
		assertThat(this.registry.get("gateway.ratelimit.near_limit").tag("route", "a").counter().count()).isEqualTo(2);
		assertThat(this.registry.get("gateway.ratelimit.near_limit").tag("route", "b").counter().count()).isEqualTo(1);
	}

	private double decisions(String route, String algorithm, String outcome) {
		return this.registry.get("gateway.ratelimit.decisions")
			.tag("route", route)
			.tag("algorithm", algorithm)
			.tag("outcome", outcome)
			.counter()
			.count();
	}

	private long roundTrips(String route, String result) {
		return this.registry.get("gateway.ratelimit.redis").tag("route", route).tag("result", result).timer().count();
	}

}
