package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holding instead of refusing (a route's max-delay), in the real script on a real Redis with an explicit
 * clock: the request is counted at its future slot, which the next request sees taken; window edges;
 * two script instances racing for the same slots; costs near the limit; several limits at one slot, all
 * or nothing; a request that may not be held (its instance holds all it may).
 */
class MaxDelayScriptTests extends ScriptTestSupport {

	/** One per second sustained, five at once. */
	private final WindowPolicy bucket = new WindowPolicy(Algorithm.TOKEN_BUCKET, 60, Duration.ofMinutes(1), 5);

	/** Three per clock-aligned second. */
	private final WindowPolicy window = policy(Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(1));

	private final String other = "test:{" + this.key.substring(6, this.key.length() - 1) + "}:other";

	private Verdict decide(List<WindowPolicy> policies, List<String> keys, long cost, long now, long maxDelay,
			boolean mayHold) {
		LimitScript.Arguments arguments = LimitScript.arguments(policies, cost, Long.toString(now), now, maxDelay);
		return this.script.decide(keys, mayHold ? arguments : arguments.withoutHold()).block(TIMEOUT);
	}

	private Verdict hold(WindowPolicy policy, long now, long maxDelay) {
		return decide(List.of(policy), List.of(this.key), 1, now, maxDelay, true);
	}

	private double tat() {
		return Double.parseDouble(stored());
	}

	@Test
	void theTokenBucketCountsAHeldRequestAtItsSlotAndTheNextOneAfterIt() {
		for (int i = 0; i < 5; i++) {
			Verdict verdict = hold(this.bucket, T0, 3_000);
			assertThat(verdict.allowed()).isTrue();
			assertThat(verdict.holdMillis()).isZero();
		}
		Verdict sixth = hold(this.bucket, T0, 3_000);
		assertThat(sixth.allowed()).isTrue();
		assertThat(sixth.holdMillis()).isEqualTo(1_000);
		// counted at T0 + 1 s: the bucket is full again 5 intervals after that
		assertThat(tat()).isEqualTo(T0 + 6_000);
		assertThat(hold(this.bucket, T0, 3_000).holdMillis()).isEqualTo(2_000);
		assertThat(hold(this.bucket, T0, 3_000).holdMillis()).isEqualTo(3_000);
		Verdict ninth = hold(this.bucket, T0, 3_000);
		assertThat(ninth.allowed()).isFalse();
		assertThat(ninth.holdMillis()).isZero();
		// a retry at T0 + 1 s would be held the whole 3 s: that is when it is worth sending
		assertThat(ninth.retryAfterMillis()).isEqualTo(1_000);
		assertThat(tat()).as("a refusal reserves nothing").isEqualTo(T0 + 8_000);
		Verdict retried = hold(this.bucket, T0 + 1_000, 3_000);
		assertThat(retried.allowed()).isTrue();
		assertThat(retried.holdMillis()).isEqualTo(3_000);
		// remaining is what the bucket holds at the slot, after the request: nothing
		assertThat(retried.decisions().get(0)).isEqualTo(new Decision(true, 0, 8_000, 0));
	}

	@Test
	void theTokenBucketHoldsFractionsOfAnIntervalRoundedUp() {
		// 7 per minute, burst 1: one every 8571.43 ms
		WindowPolicy seven = new WindowPolicy(Algorithm.TOKEN_BUCKET, 7, Duration.ofMinutes(1), 1);
		assertThat(hold(seven, T0, 20_000).holdMillis()).isZero();
		assertThat(hold(seven, T0, 20_000).holdMillis()).isEqualTo(8_572);
		assertThat(hold(seven, T0, 20_000).holdMillis()).isEqualTo(17_143);
		assertThat(hold(seven, T0, 20_000).allowed()).isFalse();
		// a request every 0.1 s for 10 minutes, each held up to 20 s: the slots are exactly one interval apart,
		// 73 from T0 to T0 + 619.9 s, the first 3 taken above
		int passed = 0;
		for (long t = 100; t < 600_000; t += 100) {
			passed += hold(seven, T0 + t, 20_000).allowed() ? 1 : 0;
		}
		assertThat(passed).isEqualTo(70);
	}

	@Test
	void theFixedWindowReservesInTheNextWindowWhenItStartsWithinMaxDelay() {
		long start = T0 + 200;
		for (int i = 0; i < 3; i++) {
			assertThat(hold(this.window, start, 1_500).holdMillis()).isZero();
		}
		for (int i = 0; i < 3; i++) {
			Verdict held = hold(this.window, start, 1_500);
			assertThat(held.allowed()).isTrue();
			assertThat(held.holdMillis()).as("until the next window begins").isEqualTo(800);
			// reset: until the window it was counted in ends
			assertThat(held.decisions().get(0)).isEqualTo(new Decision(true, 2 - i, 1_800, 0));
		}
		assertThat(pttl()).isBetween(1_000L, 1_800L);
		Verdict seventh = hold(this.window, start, 1_500);
		assertThat(seventh.allowed()).as("the window after next begins in 1.8 s").isFalse();
		assertThat(seventh.retryAfterMillis()).isEqualTo(300);
		// 0.4 s later the window after next is within reach
		assertThat(hold(this.window, start + 400, 1_500).holdMillis()).isEqualTo(1_400);
		// at the edge the reserved window is the current one: full
		Verdict atEdge = hold(this.window, T0 + 1_000, 1_500);
		assertThat(atEdge.holdMillis()).isEqualTo(1_000);
		assertThat(hold(this.window, T0 + 1_999, 1_500).holdMillis()).isEqualTo(1);
		assertThat(hold(this.window, T0 + 1_999, 1_500).holdMillis()).as("window T0+2s is full: the next").isEqualTo(1_001);
	}

	@Test
	void aFixedWindowReservedAheadPassesNothingBeforeItBegins() {
		for (int i = 0; i < 4; i++) {
			hold(this.window, T0 + 500, 1_000);
		}
		// one is counted in the next window; the stored window is that one: nothing passes now
		Verdict now = decide(List.of(this.window), List.of(this.key), 1, T0 + 600, 1_000, false);
		assertThat(now.allowed()).isFalse();
		assertThat(now.retryAfterMillis()).isEqualTo(1);
		Verdict held = hold(this.window, T0 + 600, 1_000);
		assertThat(held.holdMillis()).isEqualTo(400);
		assertThat(held.decisions().get(0).remaining()).isEqualTo(1);
	}

	@Test
	void twoInstancesRacingNeverPromiseTheSameSlot() {
		LimitScript second = new LimitScript(this.redis);
		LimitScript.Arguments bucket = LimitScript.arguments(List.of(this.bucket), 1, Long.toString(T0), T0, 10_000);
		List<Mono<Verdict>> racing = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			racing.add(((i % 2 == 0) ? this.script : second).decide(List.of(this.key), bucket));
		}
		List<Verdict> verdicts = Flux.merge(racing).collectList().block(TIMEOUT);
		Map<Long, Integer> byHold = new TreeMap<>();
		verdicts.stream().filter(Verdict::allowed).forEach(v -> byHold.merge(v.holdMillis(), 1, Integer::sum));
		// five at once, then one slot each second up to the max-delay: 15 in all, the rest refused
		Map<Long, Integer> expected = new TreeMap<>(Map.of(0L, 5));
		for (long s = 1; s <= 10; s++) {
			expected.put(s * 1_000, 1);
		}
		assertThat(byHold).isEqualTo(expected);

		String windowKey = "test:{" + UUID.randomUUID() + "}";
		LimitScript.Arguments fixed = LimitScript.arguments(List.of(this.window), 1, Long.toString(T0 + 300), T0 + 300, 2_000);
		racing.clear();
		for (int i = 0; i < 40; i++) {
			racing.add(((i % 2 == 0) ? this.script : second).decide(List.of(windowKey), fixed));
		}
		byHold.clear();
		Flux.merge(racing).filter(Verdict::allowed).toStream().forEach(v -> byHold.merge(v.holdMillis(), 1, Integer::sum));
		// this window's three at once, the next window's three at 0.7 s, the one after's at 1.7 s
		assertThat(byHold).isEqualTo(Map.of(0L, 3, 700L, 3, 1_700L, 3));
	}

	@Test
	void costsNearTheLimitMoveOnWhole() {
		WindowPolicy five = policy(Algorithm.FIXED_WINDOW, 5, Duration.ofSeconds(1));
		LimitScript.Arguments costly = LimitScript.arguments(List.of(five), 3, Long.toString(T0 + 100), T0 + 100, 2_000);
		Verdict first = this.script.decide(List.of(this.key), costly).block(TIMEOUT);
		assertThat(first.holdMillis()).isZero();
		assertThat(first.decisions().get(0).remaining()).isEqualTo(2);
		// 3 more do not fit the 2 left: the whole request moves to the next window
		Verdict second = this.script.decide(List.of(this.key), costly).block(TIMEOUT);
		assertThat(second.holdMillis()).isEqualTo(900);
		assertThat(second.decisions().get(0).remaining()).isEqualTo(2);
		assertThat(this.script.decide(List.of(this.key), costly).block(TIMEOUT).holdMillis()).isEqualTo(1_900);
		assertThat(this.script.decide(List.of(this.key), costly).block(TIMEOUT).allowed()).isFalse();
		// a cost above the limit never passes, held or not
		Verdict never = this.script.decide(List.of(this.other),
				LimitScript.arguments(List.of(five), 6, Long.toString(T0), T0, 2_000)).block(TIMEOUT);
		assertThat(never.allowed()).isFalse();
		assertThat(never.retryAfterMillis()).isEqualTo(Decision.NEVER);

		// a bucket of 5 with cost 4: after the first, 4 more come back 3 intervals later
		Verdict bucketFirst = decide(List.of(this.bucket), List.of(this.other + "b"), 4, T0, 5_000, true);
		Verdict bucketSecond = decide(List.of(this.bucket), List.of(this.other + "b"), 4, T0, 5_000, true);
		assertThat(bucketFirst.holdMillis()).isZero();
		assertThat(bucketSecond.holdMillis()).isEqualTo(3_000);
		assertThat(decide(List.of(this.bucket), List.of(this.other + "b"), 4, T0, 5_000, true).allowed()).isFalse();
		assertThat(decide(List.of(this.bucket), List.of(this.other + "b"), 6, T0, 5_000, true).retryAfterMillis())
			.isEqualTo(Decision.NEVER);
	}

	@Test
	void severalLimitsHoldForTheLongestAndAreAllCountedAtThatSlotOrNone() {
		WindowPolicy perSecond = new WindowPolicy(Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1), 1);
		WindowPolicy twoPerTen = policy(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(10));
		List<WindowPolicy> both = List.of(perSecond, twoPerTen);
		List<String> keys = List.of(this.key, this.other);
		assertThat(decide(both, keys, 1, T0, 5_000, true).holdMillis()).isZero();
		Verdict second = decide(both, keys, 1, T0, 5_000, true);
		assertThat(second.allowed()).isTrue();
		assertThat(second.holdMillis()).as("the bucket's slot, which the window takes too").isEqualTo(1_000);
		String bucketBefore = stored();
		String windowBefore = this.redis.opsForValue().get(this.other).block(TIMEOUT);
		Verdict third = decide(both, keys, 1, T0, 5_000, true);
		assertThat(third.allowed()).as("the window's next slot is 10 s away").isFalse();
		assertThat(third.denying()).containsExactly(1);
		assertThat(third.retryAfterMillis()).isEqualTo(5_000);
		assertThat(stored()).as("all or nothing").isEqualTo(bucketBefore);
		assertThat(this.redis.opsForValue().get(this.other).block(TIMEOUT)).isEqualTo(windowBefore);

		// the window moves the slot on, the bucket is then counted there too
		String a = "test:{" + UUID.randomUUID() + "}";
		String b = a + ":2";
		WindowPolicy twoPerTwo = policy(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(2));
		WindowPolicy fast = new WindowPolicy(Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(1), 10);
		List<WindowPolicy> mixed = List.of(fast, twoPerTwo);
		decide(mixed, List.of(a, b), 1, T0 + 1_500, 3_000, true);
		decide(mixed, List.of(a, b), 1, T0 + 1_500, 3_000, true);
		Verdict moved = decide(mixed, List.of(a, b), 1, T0 + 1_500, 3_000, true);
		assertThat(moved.holdMillis()).isEqualTo(500);
		// two at T0 + 1.5 s (0.2 s owed) are paid by T0 + 2 s: the bucket's time is the slot plus one interval
		assertThat(Double.parseDouble(this.redis.opsForValue().get(a).block(TIMEOUT))).isEqualTo(T0 + 2_100);
	}

	@Test
	void aRequestThatMayNotBeHeldIsDecidedForNowBehindTheReservedSlots() {
		for (int i = 0; i < 6; i++) {
			hold(this.bucket, T0, 3_000);
		}
		String reserved = stored();
		Verdict now = decide(List.of(this.bucket), List.of(this.key), 1, T0 + 500, 3_000, false);
		assertThat(now.allowed()).isFalse();
		// a retry could be held at once: refused only for want of leave, and then the shortest wait
		assertThat(now.retryAfterMillis()).isEqualTo(1);
		assertThat(stored()).isEqualTo(reserved);
		Verdict later = decide(List.of(this.bucket), List.of(this.key), 1, T0 + 2_000, 3_000, false);
		assertThat(later.allowed()).isTrue();
		assertThat(later.holdMillis()).isZero();
	}

	@Test
	void aPeekReadsReservedSlotsWithoutTouchingThem() {
		for (int i = 0; i < 8; i++) {
			hold(this.bucket, T0, 3_000);
		}
		String reserved = stored();
		Verdict peek = decide(List.of(this.bucket), List.of(this.key), 0, T0, 3_000, false);
		assertThat(peek.allowed()).isTrue();
		assertThat(peek.decisions().get(0).remaining()).isZero();
		assertThat(stored()).isEqualTo(reserved);
	}

	@Test
	void aBucketTooFarAheadIsPulledBackWithinTheMaxDelay() {
		// a clock stepped back 60 s: the time owed is at most a full bucket plus the max-delay
		for (int i = 0; i < 8; i++) {
			hold(this.bucket, T0 + 60_000, 3_000);
		}
		Verdict back = hold(this.bucket, T0, 3_000);
		assertThat(back.allowed()).isFalse();
		assertThat(tat()).isEqualTo(T0 + 8_000);
		assertThat(back.retryAfterMillis()).isEqualTo(1_000);
	}

	/** Settles a reservation of this test's key to {@code actual}, as the core does: from its slot. */
	private Settlement settle(WindowPolicy policy, Verdict reserved, long actual, long now) {
		return this.script.settle(List.of(this.key), this.key + ":settled", UUID.randomUUID().toString(), List.of(policy),
				List.of(reserved.decisionsFromNow().get(0).resetMillis()), reserved.now(), 1, actual, Long.toString(now))
			.block(TIMEOUT);
	}

	@Test
	void aHeldBucketRequestRefundedGivesBackOnlyWhatIsStillOwedAfterItsSlot() {
		// one a second, one at once
		WindowPolicy one = new WindowPolicy(Algorithm.TOKEN_BUCKET, 60, Duration.ofMinutes(1), 1);
		hold(one, T0, 3_000);
		Verdict held = hold(one, T0, 3_000);
		assertThat(held.holdMillis()).isEqualTo(1_000);
		assertThat(held.now()).isEqualTo(T0 + 1_000);
		hold(one, T0, 3_000);
		assertThat(tat()).isEqualTo(T0 + 3_000);
		// passed at T0 + 1 s, its interval of refill ends at T0 + 2 s: at T0 + 1.5 s half of it is owed, not
		// the whole interval that its reset from the decision (2 s, from T0) read from its slot would suggest
		assertThat(settle(one, held, 0, T0 + 1_500).changes()).containsExactly(-1L);
		assertThat(tat()).isEqualTo(T0 + 2_500);

		Verdict late = hold(one, T0 + 1_600, 3_000);
		assertThat(late.now()).isEqualTo(T0 + 2_500);
		hold(one, T0 + 1_600, 3_000);
		// refunded after its interval ended: nothing is owed, nothing given back
		assertThat(settle(one, late, 0, T0 + 3_600).changes()).containsExactly(0L);
		assertThat(tat()).isEqualTo(T0 + 4_500);
	}

	@Test
	void aHeldFixedWindowRequestRefundedGivesBackToTheWindowItWasCountedIn() {
		for (int i = 0; i < 3; i++) {
			hold(this.window, T0 + 200, 1_500);
		}
		Verdict held = hold(this.window, T0 + 200, 1_500);
		assertThat(held.holdMillis()).isEqualTo(800);
		assertThat(settle(this.window, held, 0, T0 + 1_100).changes()).containsExactly(-1L);
		for (int i = 0; i < 3; i++) {
			assertThat(hold(this.window, T0 + 1_100, 1_500).holdMillis()).as("the window of T0 + 1 s has room for 3")
				.isZero();
		}
	}

}
