package io.windowlimiter.core.policy;

import java.time.Duration;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.WindowPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which calls a limit with a {@code model} counts (issue 45), and the keys it counts them in. */
class RouteLimitModelUnitTests {

	private static RouteLimit limit(String model) {
		return new RouteLimit("l", new WindowPolicy(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1)), null,
				Duration.ZERO, RouteLimit.Unit.TOKENS, model);
	}

	@Test
	void aPatternMatchesAsWrittenWithStarsForAnyRun() {
		assertThat(limit("gpt-4o*").countsModel("gpt-4o")).isTrue();
		assertThat(limit("gpt-4o*").countsModel("gpt-4o-mini-2024-07-18")).isTrue();
		assertThat(limit("gpt-4o*").countsModel("GPT-4o")).as("case included").isFalse();
		assertThat(limit("gpt-4o*").countsModel("ft:gpt-4o")).isFalse();
		assertThat(limit("*4o*").countsModel("ft:gpt-4o:org")).isTrue();
		assertThat(limit("claude-*-4*").countsModel("claude-sonnet-4-20250514")).isTrue();
		assertThat(limit("claude-*-4*").countsModel("claude-3-haiku")).isFalse();
		assertThat(limit("a*a*a*b").countsModel("a".repeat(500))).isFalse();
		assertThat(limit("*").countsModel("")).isTrue();
		assertThat(limit("gpt-4o").countsModel("gpt-4o")).isTrue();
		assertThat(limit("gpt-4o").countsModel("gpt-4o-mini")).as("exact without a star").isFalse();
		assertThat(limit("*").countsModel(null)).as("a call naming no model counts in no model's limit").isFalse();
		assertThat(limit(null).countsModel(null)).isTrue();
		assertThat(limit(null).countsModel("anything")).isTrue();
	}

	@Test
	void aModelLimitsKeyIsItsOwnWhateverItsPlace() {
		java.util.Map<String, String> args = new java.util.LinkedHashMap<>();
		for (int i = 0; i < 3; i++) {
			args.put("window-rate-limiter.limits[" + i + "].limit", "10");
			args.put("window-rate-limiter.limits[" + i + "].window", "1m");
			args.put("window-rate-limiter.limits[" + i + "].unit", "tokens");
		}
		args.put("window-rate-limiter.limits[1].model", "gpt-4o*");
		args.put("window-rate-limiter.limits[2].model", "o3");
		RoutePolicy route = RouteArgs.parse("r", args);
		CompiledPolicy policy = new CompiledPolicy("r", "", route, route.limits());
		java.util.List<String> keys = policy.keysFor("c");
		assertThat(keys).doesNotHaveDuplicates();
		assertThat(keys.get(0)).endsWith(":tc");
		assertThat(keys.get(1)).endsWith(":tc" + CompiledPolicy.modelMark("gpt-4o*")).doesNotContain("gpt");
		assertThat(keys.get(2)).endsWith(":tc" + CompiledPolicy.modelMark("o3"));
		assertThat(policy.forModel("gpt-4o").keysFor("c")).containsExactly(keys.get(0), keys.get(1));
		assertThat(policy.forModel("o3").keysFor("c")).containsExactly(keys.get(0), keys.get(2));
		assertThat(policy.forModel(null).keysFor("c")).containsExactly(keys.get(0));
		assertThat(policy.forModel("gpt-4o")).as("kept once compiled").isSameAs(policy.forModel("gpt-4o-mini"));
		assertThat(policy.forModel("gpt-4o").denyPrefix).isNotEqualTo(policy.denyPrefix);
	}

}
