package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.core.ScanOptions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The concurrency module (concurrency.lua) and release.lua on the real Redis with an explicit clock: slots
 * held exactly, released idempotently, a dead holder's slot expiring after the window, one slot per request
 * whatever its cost, none taken by a request another limit refuses, and nothing left behind.
 */
class ConcurrencyScriptTests extends ScriptTestSupport {

	private static final Duration TEN_MINUTES = Duration.ofMinutes(10);

	private final WindowPolicy two = policy(Algorithm.CONCURRENCY, 2, TEN_MINUTES);

	/** Admits request {@code id} at {@code now} at this cost. */
	private Decision admit(WindowPolicy policy, String id, long cost, long now) {
		return this.script
			.decide(List.of(this.key), LimitScript.arguments(List.of(policy), cost, Long.toString(now)).withRequestId(id))
			.block(TIMEOUT)
			.decisions()
			.get(0);
	}

	private Decision admit(String id, long now) {
		return admit(this.two, id, 1, now);
	}

	private long release(String id) {
		return this.script.release(List.of(this.key), id).block(TIMEOUT);
	}

	private long held() {
		return this.redis.opsForZSet().size(this.key).block(TIMEOUT);
	}

	@Test
	void theLimitIsHeldExactlyAndARefusalSaysWhenTheOldestSlotExpiresAtTheLatest() {
		Decision first = admit("a", T0);
		assertThat(first).isEqualTo(new Decision(true, 1, TEN_MINUTES.toMillis(), 0));
		Decision second = admit("b", T0 + 1_000);
		// the oldest slot, a's, expires first
		assertThat(second).isEqualTo(new Decision(true, 0, TEN_MINUTES.toMillis() - 1_000, 0));
		Decision third = admit("c", T0 + 2_000);
		assertThat(third.allowed()).isFalse();
		assertThat(third.remaining()).isZero();
		assertThat(third.resetMillis()).isEqualTo(TEN_MINUTES.toMillis() - 2_000);
		// a slot frees when some response ends, which no one knows: try again in a second
		assertThat(third.retryAfterMillis()).isEqualTo(1_000);
		assertThat(held()).isEqualTo(2);
	}

	@Test
	void aReleasedSlotLetsTheNextInAndReleasingTwiceChangesNothing() {
		admit("a", T0);
		admit("b", T0);
		assertThat(admit("c", T0 + 10).allowed()).isFalse();
		assertThat(release("a")).isEqualTo(1);
		assertThat(release("a")).as("released before").isZero();
		assertThat(held()).isEqualTo(1);
		assertThat(admit("c", T0 + 20).allowed()).isTrue();
		assertThat(admit("d", T0 + 30).allowed()).isFalse();
	}

	@Test
	void aSlotWhoseHolderDiedExpiresAfterTheWindowAndNotBefore() {
		admit("a", T0);
		admit("b", T0 + 5_000);
		// the instance holding a and b crashed: nobody releases them
		assertThat(admit("c", T0 + TEN_MINUTES.toMillis() - 1).allowed()).as("a is held for its whole window")
			.isFalse();
		Decision afterA = admit("c", T0 + TEN_MINUTES.toMillis());
		assertThat(afterA.allowed()).isTrue();
		assertThat(afterA.remaining()).isZero();
		// b is now the oldest held
		assertThat(afterA.resetMillis()).isEqualTo(5_000);
		// a's entry was dropped when c was recorded
		assertThat(this.redis.opsForZSet().score(this.key, "a").block(TIMEOUT)).isNull();
		assertThat(admit("d", T0 + TEN_MINUTES.toMillis() + 4_999).allowed()).isFalse();
		assertThat(admit("d", T0 + TEN_MINUTES.toMillis() + 5_000).allowed()).isTrue();
	}

	@Test
	void aRequestTakesOneSlotWhateverItCostsAndAReadTakesNone() {
		assertThat(admit(this.two, "a", 5_000, T0)).isEqualTo(new Decision(true, 1, TEN_MINUTES.toMillis(), 0));
		Decision read = admit(this.two, "", 0, T0 + 1);
		assertThat(read.allowed()).isTrue();
		assertThat(read.remaining()).isEqualTo(1);
		assertThat(read.resetMillis()).isEqualTo(TEN_MINUTES.toMillis() - 1);
		assertThat(held()).isEqualTo(1);
		assertThat(admit(this.two, "b", 70_000, T0 + 2).allowed()).isTrue();
		Decision full = admit(this.two, "", 0, T0 + 3);
		assertThat(full.allowed()).isFalse();
		assertThat(full.remaining()).isZero();
	}

	@Test
	void aRequestAnotherLimitRefusesTakesNoSlot() {
		WindowPolicy onePerMinute = policy(Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		List<String> keys = List.of(this.key + ":rate", this.key);
		LimitScript.Arguments first = LimitScript.arguments(List.of(onePerMinute, this.two), 1, Long.toString(T0))
			.withRequestId("a");
		assertThat(this.script.decide(keys, first).block(TIMEOUT).allowed()).isTrue();
		LimitScript.Arguments second = LimitScript.arguments(List.of(onePerMinute, this.two), 1, Long.toString(T0 + 1))
			.withRequestId("b");
		Verdict refused = this.script.decide(keys, second).block(TIMEOUT);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.denying()).containsExactly(0);
		assertThat(held()).isEqualTo(1);
		assertThat(this.redis.opsForZSet().score(this.key, "b").block(TIMEOUT)).isNull();
	}

	@Test
	void manyAdmissionsAtOnceHoldTheLimitExactly() {
		WindowPolicy five = policy(Algorithm.CONCURRENCY, 5, TEN_MINUTES);
		// 200 decisions in flight together on the Redis clock: the script is atomic, so exactly 5 pass
		List<Boolean> allowed = Flux.range(0, 200)
			.flatMap(i -> this.script.decide(List.of(this.key),
					LimitScript.arguments(List.of(five), 1, "").withRequestId("r" + i)), 64)
			.map(Verdict::allowed)
			.collectList()
			.block(TIMEOUT);
		assertThat(allowed).hasSize(200);
		assertThat(allowed.stream().filter(ok -> ok).count()).isEqualTo(5);
		assertThat(held()).isEqualTo(5);
	}

	@Test
	void theKeyLivesAsLongAsItsNewestSlotAndNoLonger() {
		admit("a", T0);
		assertThat(pttl()).isBetween(TEN_MINUTES.toMillis() - 2_000, TEN_MINUTES.toMillis());
		release("a");
		assertThat(exists()).as("its last slot released, Redis deletes the set").isFalse();
	}

	@Test
	void freshClientsByTheThousandLeaveNothingBehindOnceReleasedOrExpired() throws InterruptedException {
		String prefix = "test:conc:" + UUID.randomUUID() + ":";
		// 1,000 clients whose requests end: each set is deleted with its last slot
		Flux.range(0, 1_000)
			.flatMap(i -> this.script
				.decide(List.of(prefix + "{r" + i + "}"), LimitScript.arguments(List.of(this.two), 1, "").withRequestId("id"))
				.then(this.script.release(List.of(prefix + "{r" + i + "}"), "id")), 64)
			.blockLast(TIMEOUT);
		assertThat(keys(prefix)).as("released").isEmpty();
		// 1,000 clients whose instance died mid-request: each set expires with its window
		WindowPolicy shortHold = policy(Algorithm.CONCURRENCY, 3, Duration.ofSeconds(2));
		Flux.range(0, 1_000)
			.flatMap(i -> this.script.decide(List.of(prefix + "{d" + i + "}"),
					LimitScript.arguments(List.of(shortHold), 1, "").withRequestId("id")), 64)
			.blockLast(TIMEOUT);
		assertThat(keys(prefix)).as("held").hasSize(1_000);
		Thread.sleep(2_500);
		assertThat(keys(prefix)).as("expired with their window").isEmpty();
	}

	private List<String> keys(String prefix) {
		return this.redis.scan(ScanOptions.scanOptions().match(prefix + "*").count(1_000).build())
			.collectList()
			.block(TIMEOUT);
	}

}
