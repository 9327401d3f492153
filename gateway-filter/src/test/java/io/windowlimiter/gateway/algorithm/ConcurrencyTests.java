package io.windowlimiter.gateway.algorithm;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;

/** The scripts are atomic: 200 requests in flight at once against a limit of 50 let exactly 50 through. */
class ConcurrencyTests extends ScriptTestSupport {

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void exactlyTheLimitPassesUnderConcurrency(Algorithm algorithm) {
		WindowAlgorithm window = algorithm(algorithm, this.redis);
		// On the Redis clock. Epoch-aligned windows of 366 days put a window edge inside this test's
		// second only once in 366 days, so the count is not split over two windows.
		WindowPolicy policy = policy(algorithm, 50, WindowPolicy.MAX_WINDOW);
		long allowed = Flux.range(0, 200)
			.flatMap(i -> window.decide(this.key, policy), 200)
			.filter(Decision::allowed)
			.count()
			.block(Duration.ofSeconds(30));
		assertThat(allowed).isEqualTo(50);
	}

}
