package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.windowlimiter.core.key.RedisKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * decide.lua and settle.lua with a cost per limit (after the limits in ARGV), on the real Redis with an
 * explicit clock, the token limit by each algorithm beside a request limit: all or nothing, each limit its own
 * cost, a refund and a late charge on the token limit only, and a refund after the window rolled never giving
 * more than the limit.
 */
class LlmCostsScriptTests extends ScriptTestSupport {

	private final String tag = "{" + UUID.randomUUID() + "}";

	private final List<String> keys = List.of("test:" + this.tag + ":tokens", "test:" + this.tag + ":requests");

	private List<WindowPolicy> policies(Algorithm algorithm) {
		return List.of(new WindowPolicy(algorithm, 1000, Duration.ofMinutes(1)),
				new WindowPolicy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1)));
	}

	private Verdict decide(Algorithm algorithm, long tokens, long now) {
		return this.script.decide(this.keys,
				LimitScript.arguments(policies(algorithm), 1, Long.toString(now)).withCosts(new long[] { tokens, 1 }))
			.block(TIMEOUT);
	}

	private List<Long> remaining(Algorithm algorithm, long now) {
		return this.script.decide(this.keys, LimitScript.arguments(policies(algorithm), 0, Long.toString(now)))
			.block(TIMEOUT)
			.decisions()
			.stream()
			.map(Decision::remaining)
			.toList();
	}

	/** Settles the reservation {@code reserved} was (its time and resets say where it landed). */
	private Settlement settle(Algorithm algorithm, String id, Verdict reserved, long reservedTokens, long actualTokens,
			long now) {
		return this.script.settle(this.keys, RedisKeys.settledMarkers("wrl:" + this.tag + ":r:c", 0), id,
				policies(algorithm), reserved.decisions().stream().map(Decision::resetMillis).toList(), reserved.now(),
				new long[] { reservedTokens, 1 }, new long[] { actualTokens, 1 }, Long.toString(now)).block(TIMEOUT);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void eachLimitCountsItsOwnCostAllOrNothing(Algorithm algorithm) {
		Verdict first = decide(algorithm, 300, T0);
		assertThat(first.allowed()).isTrue();
		assertThat(first.decisions()).extracting(Decision::remaining).containsExactly(700L, 4L);
		Verdict tooMany = decide(algorithm, 800, T0 + 10);
		assertThat(tooMany.allowed()).isFalse();
		assertThat(tooMany.denying()).containsExactly(0);
		assertThat(remaining(algorithm, T0 + 20)).as("nothing counted by either").containsExactly(700L, 4L);

		Settlement refund = settle(algorithm, "a", first, 300, 30, T0 + 30);
		assertThat(refund.applied()).isTrue();
		assertThat(refund.changes()).containsExactly(-270L, 0L);
		assertThat(remaining(algorithm, T0 + 40)).containsExactly(970L, 4L);
		assertThat(settle(algorithm, "a", first, 300, 0, T0 + 50).applied()).as("once").isFalse();

		Verdict second = decide(algorithm, 300, T0 + 60);
		Settlement charge = settle(algorithm, "b", second, 300, 1200, T0 + 70);
		assertThat(charge.changes().get(0)).as("charged past the limit").isPositive();
		assertThat(charge.changes().get(1)).isZero();
		assertThat(remaining(algorithm, T0 + 80).get(0)).isZero();
		assertThat(decide(algorithm, 1, T0 + 90).allowed()).as("later calls wait").isFalse();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aRefundAfterTheWindowRolledNeverGivesMoreThanTheLimit(Algorithm algorithm) {
		long at = T0 + 59_900;
		Verdict reserved = decide(algorithm, 900, at);
		assertThat(reserved.allowed()).isTrue();
		Settlement refund = settle(algorithm, "c", reserved, 900, 0, T0 + 60_100);
		assertThat(refund.applied()).isTrue();
		assertThat(refund.changes().get(1)).as("the request limit untouched").isZero();
		assertThat(remaining(algorithm, T0 + 60_200).get(0)).isBetween(0L, 1000L);
		assertThat(remaining(algorithm, T0 + 60_200).get(1)).isEqualTo(4L);
	}


	/**
	 * Costs per limit travel in the one cost argument, so the arguments a penalty appends still count right
	 * (appended after the limits, as they first were, the costs were read as a penalty's, and the block key as
	 * a third limit).
	 */
	@Test
	void costsPerLimitBesideAPenalty() {
		List<String> keys = List.of(this.keys.get(0), this.keys.get(1), "test:" + this.tag + ":block");
		LimitScript.Arguments arguments = LimitScript.arguments(policies(Algorithm.FIXED_WINDOW), 1, Long.toString(T0))
			.withCosts(new long[] { 300, 1 })
			.withPenalty(List.of(0L, 60_000L));
		Verdict first = this.script.decide(keys, arguments).block(TIMEOUT);
		assertThat(first.allowed()).isTrue();
		assertThat(first.decisions()).extracting(Decision::remaining).containsExactly(700L, 4L);
		assertThat(first.blockedMillis()).isZero();
		for (int i = 0; i < 4; i++) {
			assertThat(this.script.decide(keys, arguments.withCosts(new long[] { 10, 1 })).block(TIMEOUT).allowed()).isTrue();
		}
		// the sixth request of five: the request limit refuses and its penalty blocks
		Verdict refused = this.script.decide(keys, arguments.withCosts(new long[] { 10, 1 })).block(TIMEOUT);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.denying()).containsExactly(1);
		assertThat(refused.blockedMillis()).isEqualTo(60_000);
		assertThat(remaining(Algorithm.FIXED_WINDOW, T0 + 10).get(0)).as("tokens: 300 and 4 x 10").isEqualTo(660L);
	}

}
