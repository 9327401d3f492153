package io.windowlimiter.accuracy;

import java.util.List;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The simulator end to end on a real Redis: hand-made traces whose scores are worked out by hand, and
 * a random trace on which the sliding log script must agree with the Java exact log and every script
 * with its rule re-run in Java.
 */
class AccuracyReplayTests {

	private final ScriptReplay replay = new ScriptReplay(new LimitScript(RedisTestServer.get().template()), 8);

	@BeforeEach
	void emptyRedis() {
		// Replays of one trace reuse its keys; the scripts' expiry runs on Redis's clock, not the trace's.
		RedisTestServer.get().flushAll();
	}

	private Score score(Trace trace, Algorithm algorithm) {
		return Scoring.score(trace, algorithm, this.replay.replay(trace, algorithm));
	}

	@Test
	void windowEdgeCaseScoresAsWorkedOutByHand() {
		Trace trace = Traces.windowEdge();

		Score fixed = score(trace, Algorithm.FIXED_WINDOW);
		assertThat(fixed.allowed()).isEqualTo(200);
		assertThat(fixed.exactAllowed()).isEqualTo(100);
		assertThat(fixed.wronglyAllowed()).isEqualTo(100);
		assertThat(fixed.wronglyDenied()).isZero();
		assertThat(fixed.overshoot()).isEqualTo(2.0);
		// The first 100 see their own window's count, which is exact; each of the last 100 sees only the
		// new window's count and misses the 100 from second 59: 100 x 100 / 200 requests / limit 100.
		assertThat(fixed.countErrorOfLimit()).isCloseTo(0.5, within(1e-9));

		Score log = score(trace, Algorithm.SLIDING_LOG);
		assertThat(log.allowed()).isEqualTo(100);
		assertThat(log.wronglyAllowed() + log.wronglyDenied()).isZero();
		assertThat(log.overshoot()).isEqualTo(1.0);
		assertThat(log.countErrorOfLimit()).isZero();

		Score counter = score(trace, Algorithm.SLIDING_WINDOW_COUNTER);
		assertThat(counter.allowed()).isEqualTo(101);
		assertThat(counter.wronglyAllowed()).isEqualTo(1);
		assertThat(counter.wronglyDenied()).isZero();
		assertThat(counter.overshoot()).isEqualTo(1.01);
		// At second 61 the counter weighs second 59's 100 by 59/60 and so misses 100/60 of them, for each
		// of the last 100 requests: 100 x (100/60) / 200 requests / limit 100.
		assertThat(counter.countErrorOfLimit()).isCloseTo(100 * (100.0 / 60) / 200 / 100, within(1e-9));

		// A full bucket lets 100 through at second 59; two seconds refill 2000 / 600 ms = 3.33 requests.
		Score bucket = score(trace, Algorithm.TOKEN_BUCKET);
		assertThat(bucket.allowed()).isEqualTo(103);
		assertThat(bucket.overshoot()).isEqualTo(1.03);

		Score sortedSet = score(trace, Algorithm.SLIDING_LOG_SORTED_SET);
		assertThat(sortedSet.allowed()).isEqualTo(100);

		for (Score score : List.of(fixed, log, counter, bucket, sortedSet)) {
			assertThat(score.modelMismatches()).as(score.algorithm().toString()).isZero();
		}
	}

	@Test
	void counterAndBucketLetNearlyTwiceTheLimitThroughWhenABurstEndsAWindowAndTrafficGoesOn() {
		Trace trace = Traces.edgeThenSteady();
		assertThat(score(trace, Algorithm.SLIDING_LOG).overshoot()).isEqualTo(1.0);
		// The fixed window lets the next 100 through in the first 10 s of the new window.
		assertThat(score(trace, Algorithm.FIXED_WINDOW).overshoot()).isEqualTo(2.0);
		// At e ms into the new window the counter takes 100 x (60000 - e) / 60000 as still in the window,
		// so it has allowed floor(e / 600) new requests by then. Second 59.9 leaves the span (t - 60 s, t]
		// only at t = 119.9 s: the span ending at 119.8 s holds 100 + floor(59800 / 600) = 199.
		Score counter = score(trace, Algorithm.SLIDING_WINDOW_COUNTER);
		assertThat(counter.overshoot()).isEqualTo(1.99);
		assertThat(counter.modelMismatches()).isZero();
		// The burst empties the bucket until second 119.9; one request per 600 ms comes back from second
		// 60.5 on: by second 119.8 that is floor(59.3 / 0.6) + 1 = 99, next to the 100 of second 59.9.
		Score bucket = score(trace, Algorithm.TOKEN_BUCKET);
		assertThat(bucket.overshoot()).isEqualTo(1.99);
		assertThat(bucket.modelMismatches()).isZero();
	}

	@Test
	void slidingLogScriptsAgreeWithTheJavaExactLogAndEveryScriptWithItsRule() {
		// A few clients, a few minutes, around the limit and bursty: where decisions are close calls.
		List<Trace> traces = List.of(Traces.steady(1.2, 4, 3, 11), Traces.onOff(1.5, 0.25, 4, 3, 12),
				Traces.periodic(1, 0.1, 4, 3, 13));
		for (Trace trace : traces) {
			for (Algorithm algorithm : Algorithm.rates()) {
				Score score = score(trace, algorithm);
				assertThat(score.requests()).isGreaterThan(500);
				assertThat(score.modelMismatches()).as(trace.name() + " " + algorithm).isZero();
				if (Algorithms.exact(algorithm)) {
					assertThat(score.wronglyAllowed() + score.wronglyDenied()).as(trace.name()).isZero();
					assertThat(score.allowed()).isLessThan(score.requests());
				}
			}
		}
	}

}
