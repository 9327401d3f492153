package io.windowlimiter.gateway.algorithm;

import java.time.Duration;

import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Scripts run by SHA; when Redis has forgotten them (restart, SCRIPT FLUSH) they are sent again. */
class ScriptLoadingTests extends ScriptTestSupport {

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aFlushedScriptCacheIsRefilledTransparently(Algorithm algorithm) {
		WindowAlgorithm window = algorithm(algorithm, this.redis);
		WindowPolicy policy = policy(algorithm, 2, Duration.ofMinutes(1));
		assertThat(decide(window, policy, T0).allowed()).isTrue();
		RedisTestServer.get().flushScripts();
		assertThat(decide(window, policy, T0).allowed()).isTrue();
		assertThat(decide(window, policy, T0).allowed()).isFalse();
	}

}
