package io.windowlimiter.gateway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The dashboard in config/ is valid JSON and queries only the meters the limiter publishes. */
class GrafanaDashboardUnitTests {

	@Test
	void everyPanelQueriesTheLimitersMeters() throws IOException {
		String dashboard = Files.readString(Path.of("../config/grafana-dashboard.json"));
		List<String> queries = JsonPath.read(dashboard, "$.panels[*].targets[*].expr");
		assertThat(queries).hasSizeGreaterThanOrEqualTo(6)
			.allSatisfy(query -> assertThat(query).containsAnyOf("gateway_ratelimit_decisions_total",
					"gateway_ratelimit_redis_seconds_bucket", "gateway_ratelimit_redis_seconds_count",
					"gateway_ratelimit_near_limit_total"));
		assertThat(String.join("\n", queries)).contains("outcome=\"denied\"", "outcome=\"shadowed\"",
				"outcome=~\"error|fallback\"", "result=\"failure\"", "gateway_ratelimit_near_limit_total",
				"outcome=~\"exempt|blocked\"");
	}

}
