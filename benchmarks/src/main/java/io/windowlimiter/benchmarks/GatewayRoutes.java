package io.windowlimiter.benchmarks;

import java.util.List;
import java.util.Map;

/**
 * The gateway configuration of the HTTP benchmark, one route per {@link HttpCase}, written as YAML
 * for gateway-app's {@code --spring.config.additional-location}. Every route proxies to the same
 * downstream and differs from the others only in its rate limiter; clients are told apart by
 * {@code X-API-Key} ({@code headerKeyResolver}) on every limited route, ours and the built-in.
 */
final class GatewayRoutes {

	static final String ALLOWED_WINDOW = "1m";

	/** A flooding client's limit: 100 a minute (the built-in: 2 a second, bursts of 100). */
	static final long FLOOD_LIMIT = 100;

	static final String FLOOD_WINDOW = "1m";

	/** High enough that no client of the allowed cases is ever refused by the built-in. */
	static final String BUILT_IN_HIGH_RATE = "1000000";

	static final String BUILT_IN_FLOOD_RATE = "2";

	static final String BUILT_IN_FLOOD_BURST = "100";

	private GatewayRoutes() {
	}

	static String yaml(List<HttpCase> cases) {
		StringBuilder yaml = new StringBuilder();
		yaml.append("# Written by the HTTP benchmark (GatewayRoutes.java); bench.downstream comes on the command line\n");
		yaml.append("logging.level.root: WARN\n");
		yaml.append("spring.cloud.gateway.server.webflux.routes:\n");
		for (HttpCase c : cases) {
			yaml.append("  - id: ").append(c.routeId()).append('\n');
			yaml.append("    uri: ${bench.downstream}\n");
			yaml.append("    predicates: [ \"Path=/").append(c.routeId()).append("/**\" ]\n");
			if (c.builtIn()) {
				args(yaml, "#{@redisRateLimiter}",
						Map.of("redis-rate-limiter.replenish-rate", c.flood() ? BUILT_IN_FLOOD_RATE : BUILT_IN_HIGH_RATE,
								"redis-rate-limiter.burst-capacity", c.flood() ? BUILT_IN_FLOOD_BURST : BUILT_IN_HIGH_RATE));
			}
			else if (c.algorithm() != null && c.integration() != HttpCase.Integration.REQUEST_RATE_LIMITER) {
				filter(yaml, c);
			}
			else if (c.algorithm() != null) {
				args(yaml, "#{@windowRateLimiter}",
						Algorithms.routeArgs(c.algorithm(), c.limit(), c.flood() ? FLOOD_WINDOW : ALLOWED_WINDOW));
			}
		}
		return yaml.toString();
	}

	/** The WindowRateLimit filter with the same limits, unprefixed; settling every request if the case says so. */
	private static void filter(StringBuilder yaml, HttpCase c) {
		yaml.append("    filters:\n");
		yaml.append("      - name: WindowRateLimit\n");
		yaml.append("        args:\n");
		yaml.append("          key-resolver: \"#{@headerKeyResolver}\"\n");
		Algorithms.routeArgs(c.algorithm(), c.limit(), c.flood() ? FLOOD_WINDOW : ALLOWED_WINDOW)
			.forEach((name, value) -> yaml.append("          ")
				.append(name.substring("window-rate-limiter.".length()))
				.append(": ")
				.append(value)
				.append('\n'));
		if (c.integration() == HttpCase.Integration.FILTER_SETTLING) {
			// the downstream answers 200: no response counts, each reservation is given back
			yaml.append("          count-statuses: 4xx\n");
		}
	}

	private static void args(StringBuilder yaml, String rateLimiter, Map<String, ?> limiterArgs) {
		yaml.append("    filters:\n");
		yaml.append("      - name: RequestRateLimiter\n");
		yaml.append("        args:\n");
		yaml.append("          key-resolver: \"#{@headerKeyResolver}\"\n");
		yaml.append("          rate-limiter: \"").append(rateLimiter).append("\"\n");
		limiterArgs.forEach((name, value) -> yaml.append("          ").append(name).append(": ").append(value).append('\n'));
	}

}
