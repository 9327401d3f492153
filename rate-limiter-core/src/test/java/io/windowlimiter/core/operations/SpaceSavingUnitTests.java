package io.windowlimiter.core.operations;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SpaceSavingUnitTests {

	@Test
	void countsExactlyWhileEveryItemHasACounter() {
		SpaceSaving sketch = new SpaceSaving(3);
		offer(sketch, "a", 5);
		offer(sketch, "b", 2);
		offer(sketch, "c", 7);
		assertThat(sketch.estimates()).containsExactly(new SpaceSaving.Estimate("c", 7, 0),
				new SpaceSaving.Estimate("a", 5, 0), new SpaceSaving.Estimate("b", 2, 0));
	}

	@Test
	void aNewcomerTakesTheSmallestCounterAndItsCountAsError() {
		SpaceSaving sketch = new SpaceSaving(2);
		offer(sketch, "a", 5);
		offer(sketch, "b", 2);
		sketch.offer("c");
		assertThat(sketch.estimates()).containsExactly(new SpaceSaving.Estimate("a", 5, 0),
				new SpaceSaving.Estimate("c", 3, 2));
	}

	/** A few heavy clients among 10,000 one-off keys (a scan with random keys): all found, bounds hold. */
	@Test
	void findsTheHeavyHittersAmongManyDistinctKeysInFixedMemory() {
		SpaceSaving sketch = new SpaceSaving(32);
		Map<String, Long> truth = new HashMap<>();
		Random random = new Random(42);
		for (int i = 0; i < 10_000; i++) {
			String item = switch (random.nextInt(10)) {
				case 0, 1, 2 -> "heavy-1";
				case 3, 4 -> "heavy-2";
				case 5 -> "heavy-3";
				default -> "noise-" + i;
			};
			sketch.offer(item);
			truth.merge(item, 1L, Long::sum);
		}
		List<SpaceSaving.Estimate> estimates = sketch.estimates();
		assertThat(estimates).hasSizeLessThanOrEqualTo(32);
		assertThat(estimates.subList(0, 3)).extracting(SpaceSaving.Estimate::item)
			.containsExactly("heavy-1", "heavy-2", "heavy-3");
		for (SpaceSaving.Estimate estimate : estimates) {
			long actual = truth.get(estimate.item());
			assertThat(estimate.count()).as(estimate.item()).isGreaterThanOrEqualTo(actual);
			assertThat(estimate.count() - estimate.error()).as(estimate.item()).isLessThanOrEqualTo(actual);
		}
		// the guarantee: any item above total / counters is held
		assertThat(estimates.get(2).count() - estimates.get(2).error()).isGreaterThan(sketch.total() / 32 / 2);
	}

	@Test
	void needsACounter() {
		assertThatIllegalArgumentException().isThrownBy(() -> new SpaceSaving(0));
	}

	private static void offer(SpaceSaving sketch, String item, int times) {
		for (int i = 0; i < times; i++) {
			sketch.offer(item);
		}
	}

}
