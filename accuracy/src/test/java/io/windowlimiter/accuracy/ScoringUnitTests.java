package io.windowlimiter.accuracy;

import java.time.Duration;
import java.util.List;

import io.windowlimiter.core.algorithm.Algorithm;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The metric arithmetic on hand-made answers whose scores are known, no Redis involved. */
class ScoringUnitTests {

	private static final long W = 60_000;

	@Test
	void aWindowLongSpanIncludesItsEndAndExcludesItsStart() {
		// (t - 60 s, t]: requests exactly 60 s apart never share a span, 1 ms less apart they do.
		assertThat(Scoring.mostAllowedInAnyWindow(new long[] { 0, 60_000 }, new boolean[] { true, true }, W)).isEqualTo(1);
		assertThat(Scoring.mostAllowedInAnyWindow(new long[] { 0, 59_999 }, new boolean[] { true, true }, W)).isEqualTo(2);
	}

	@Test
	void onlyAllowedRequestsCountTowardsTheBusiestSpan() {
		long[] times = { 0, 10, 20, 30, 70_000, 70_001 };
		boolean[] allowed = { true, false, true, false, true, true };
		assertThat(Scoring.mostAllowedInAnyWindow(times, allowed, W)).isEqualTo(2);
	}

	@Test
	void requestsAtTheSameMomentAllCountTogether() {
		long[] times = { 5, 5, 5, 5 };
		assertThat(Scoring.mostAllowedInAnyWindow(times, new boolean[] { true, true, true, true }, W)).isEqualTo(4);
	}

	@Test
	void theExactLogAllowsTheLimitInAnySpanAndForgetsDenials() {
		// Limit 2: 0 and 1 pass, 2 is denied (not logged), 60_000 passes because 0 has left, 60_001 passes
		// because 1 has left too, 60_002 is denied.
		long[] times = { 0, 1, 2, 60_000, 60_001, 60_002 };
		assertThat(ExactLog.decide(times, 2, W)).containsExactly(true, true, false, true, true, false);
	}

	@Test
	void wronglyAllowedAndDeniedCompareEachRequestWithTheExactLog() {
		// Limit 2 per minute. A made-up algorithm lets all three early requests through and then denies the
		// two late ones the exact log allows: 1 wrongly allowed, 2 wrongly denied.
		long[] times = { 0, 1, 2, 60_000, 60_001 };
		ScriptReplay.Answers answers = new ScriptReplay.Answers(new boolean[] { true, true, true, false, false },
				new long[5]);
		Trace trace = new Trace("made-up", "made up", 1, 2, Duration.ofMillis(W),
				List.of(new ClientTrace("c", times)));
		Score score = Scoring.score(trace, Algorithm.SLIDING_LOG, List.of(answers));
		assertThat(score.requests()).isEqualTo(5);
		assertThat(score.allowed()).isEqualTo(3);
		assertThat(score.exactAllowed()).isEqualTo(4);
		assertThat(score.wronglyAllowed()).isEqualTo(1);
		assertThat(score.wronglyDenied()).isEqualTo(2);
		assertThat(score.overshoot()).isEqualTo(1.5);
		assertThat(score.clientsOverLimit()).isEqualTo(1);
		assertThat(score.clientsLimited()).isEqualTo(1);
		assertThat(score.allowedVsExact()).isEqualTo(-0.25);
		// Not what the sliding log rule answers, and the Java re-run of the rule notices all three places:
		// request 0 (remaining 1, not 0), request 2 (over the limit) and request 4 (1 has left the window).
		assertThat(score.modelMismatches()).isEqualTo(3);
	}

	@Test
	void tracesReproduceFromTheirSeed() {
		Trace first = Traces.manyClients(50, 3, 7);
		Trace second = Traces.manyClients(50, 3, 7);
		assertThat(second.requests()).isEqualTo(first.requests()).isGreaterThan(0);
		for (int c = 0; c < first.clients().size(); c++) {
			assertThat(second.clients().get(c).times()).containsExactly(first.clients().get(c).times());
		}
		assertThat(Traces.manyClients(50, 3, 8).requests()).isNotEqualTo(first.requests());
	}

	@Test
	void steadyTracesOfferTheirLevelOnAverage() {
		Trace trace = Traces.steady(2, 20, 10, 1);
		double perClientMinute = (double) trace.requests() / (20 * 10);
		assertThat(perClientMinute).isBetween(190.0, 210.0);
		Trace bursts = Traces.periodic(1, 0.1, 20, 10, 1);
		assertThat((double) bursts.requests() / (20 * 10)).isBetween(90.0, 110.0);
	}

}
