package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.windowlimiter.core.key.RedisKeys;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/** The ring storage of the sliding log (the default): same decisions, memory that follows the traffic. */
class SlidingLogTests extends ScriptTestSupport {

	private final WindowPolicy threePerMinute = policy(Algorithm.SLIDING_LOG, 3, Duration.ofMinutes(1));

	private long valueBytes() {
		return this.redis.opsForValue().size(this.key).block(TIMEOUT);
	}

	@Test
	void eachRequestCountsForExactlyOneWindow() {
		assertThat(decide(this.threePerMinute, T0 + 10_000)).isEqualTo(new Decision(true, 2, 60_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 20_000)).isEqualTo(new Decision(true, 1, 50_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 30_000)).isEqualTo(new Decision(true, 0, 40_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 69_999)).isEqualTo(new Decision(false, 0, 1, 1));
		// the request of T0 + 10s leaves the window at T0 + 70s, not before
		assertThat(decide(this.threePerMinute, T0 + 70_000)).isEqualTo(new Decision(true, 0, 10_000, 0));
	}

	@Test
	void remainingCountsOnlyRequestsStillInsideTheWindow() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		burst(five, T0, 2);
		burst(five, T0 + 30_000, 2);
		// at T0 + 61 s the first two have left: two in the window plus this one leaves 2
		assertThat(decide(five, T0 + 61_000)).isEqualTo(new Decision(true, 2, 29_000, 0));
	}

	@Test
	void requestsInTheSameMillisecondAreEachCounted() {
		WindowPolicy hundred = policy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1));
		assertThat(burst(hundred, T0, 150)).isEqualTo(100);
		assertThat(decide(hundred, T0 + 59_999).retryAfterMillis()).isEqualTo(1);
	}

	@Test
	void theRingGrowsWithTheRequestsInTheWindowAndShrinksWhenTheyLeave() {
		WindowPolicy hundred = policy(Algorithm.SLIDING_LOG, 100, Duration.ofMinutes(1));
		decide(hundred, T0);
		// a header and two slots, whatever the limit
		assertThat(valueBytes()).isEqualTo(12 + 8 * 2);
		for (int i = 0; i < 20; i++) {
			decide(hundred, T0 + 1_000 + i);
		}
		assertThat(valueBytes()).isEqualTo(12 + 8 * 30);
		// never past the limit, and a flood over it writes nothing
		for (int i = 0; i < 5_000; i++) {
			decide(hundred, T0 + 2_000 + i);
		}
		assertThat(valueBytes()).isEqualTo(12 + 8 * 100);
		// a minute after the last accepted (at 2.078 s) only the new request is in the window
		decide(hundred, T0 + 62_079);
		assertThat(valueBytes()).isEqualTo(12 + 8 * 2);
		// requests of one millisecond share an entry
		assertThat(burst(hundred, T0 + 70_000, 50)).isEqualTo(50);
		assertThat(valueBytes()).isEqualTo(12 + 8 * 2);
	}

	private Decision decide(WindowPolicy policy, long cost, long now) {
		return this.script.decideOne(this.key, policy, cost, Long.toString(now)).block(TIMEOUT);
	}

	@Test
	void aRequestCostingSeveralUnitsIsOneEntryAcrossTheRingsEnd() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		burst(five, T0, 3);
		decide(five, T0 + 30_000);
		assertThat(valueBytes()).isEqualTo(12 + 8 * 2);
		// four units at once need three of the requests of T0 to leave
		assertThat(decide(five, 4, T0 + 1_000)).isEqualTo(new Decision(false, 1, 59_000, 59_000));
		// at T0 + 60 s they have left: the oldest kept is slot 1, so the two units of this one take slot 0
		assertThat(decide(five, 2, T0 + 60_000)).isEqualTo(new Decision(true, 2, 30_000, 0));
		assertThat(valueBytes()).isEqualTo(12 + 8 * 2);
		// the ring grows (copied across its end, in time order), then the same millisecond shares an entry
		assertThat(decide(five, T0 + 89_999)).isEqualTo(new Decision(true, 1, 1, 0));
		assertThat(decide(five, T0 + 89_999)).isEqualTo(new Decision(true, 0, 1, 0));
		assertThat(valueBytes()).isEqualTo(12 + 8 * 5);
		// the request of T0 + 30 s leaves first
		assertThat(decide(five, T0 + 89_999)).isEqualTo(new Decision(false, 0, 1, 1));
		// then the two units of T0 + 60 s, together
		assertThat(decide(five, 2, T0 + 119_999)).isEqualTo(new Decision(false, 1, 1, 1));
		assertThat(decide(five, 2, T0 + 120_000)).isEqualTo(new Decision(true, 1, 29_999, 0));
	}

	/**
	 * What a request costs Redis does not grow with its cost: a million units is one entry, and Retry-After
	 * still finds the very unit whose leaving lets a request through among entries of any cost.
	 */
	@Test
	void aRequestOfAnyCostIsOneEntryAndRetryAfterFindsTheUnitThatFrees() {
		WindowPolicy tokens = policy(Algorithm.SLIDING_LOG, 1_000_000, Duration.ofMinutes(1));
		assertThat(decide(tokens, 1_000_000, T0)).isEqualTo(new Decision(true, 0, 60_000, 0));
		assertThat(valueBytes()).isEqualTo(12 + 8 * 2);
		assertThat(decide(tokens, 1, T0 + 59_999)).isEqualTo(new Decision(false, 0, 1, 1));
		assertThat(decide(tokens, 400_000, T0 + 60_000)).isEqualTo(new Decision(true, 600_000, 60_000, 0));
		for (int i = 1; i <= 10; i++) {
			assertThat(decide(tokens, 10_000 * i, T0 + 60_000 + 1_000 * i).allowed()).isTrue();
		}
		// 11 entries holding 400,000 + 10,000 * (1 + ... + 10) = 950,000 units
		assertThat(valueBytes()).isEqualTo(12 + 8 * 14);
		// 600,000 more need 550,000 to leave: 400,000 + 10,000 + ... + 50,000, the fifth, logged at 65 s
		assertThat(decide(tokens, 600_000, T0 + 100_000)).isEqualTo(new Decision(false, 50_000, 20_000, 25_000));
		assertThat(decide(tokens, 600_000, T0 + 124_999).allowed()).isFalse();
		assertThat(decide(tokens, 600_000, T0 + 125_000)).isEqualTo(new Decision(true, 0, 1_000, 0));
	}

	@Test
	void deniedRequestsWriteNothingAndTheKeyExpiresOneWindowAfterTheNewestRequest() {
		burst(this.threePerMinute, T0, 3);
		String full = this.redis.opsForValue().get(this.key).block(TIMEOUT);
		assertThat(decide(this.threePerMinute, T0 + 1_000).allowed()).isFalse();
		assertThat(this.redis.opsForValue().get(this.key).block(TIMEOUT)).isEqualTo(full);
		assertThat(pttl()).isBetween(59_000L, 60_000L);
	}

	@Test
	void aRaisedLimitCountsTheSameHistory() {
		WindowPolicy ten = policy(Algorithm.SLIDING_LOG, 10, Duration.ofMinutes(1));
		WindowPolicy twelve = policy(Algorithm.SLIDING_LOG, 12, Duration.ofMinutes(1));
		assertThat(burst(ten, T0, 10)).isEqualTo(10);
		assertThat(burst(twelve, T0 + 1_000, 10)).isEqualTo(2);
		assertThat(decide(twelve, T0 + 59_999).allowed()).isFalse();
		assertThat(burst(twelve, T0 + 60_000, 20)).isEqualTo(10);
	}

	@Test
	void aLoweredLimitDeniesUntilEnoughRequestsHaveLeft() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		for (int i = 0; i < 5; i++) {
			decide(five, T0 + 1_000 * i);
		}
		// with the limit now 3, the requests of T0, T0 + 1 s and T0 + 2 s must leave: the third at T0 + 62 s
		Decision denied = decide(this.threePerMinute, T0 + 10_000);
		assertThat(denied).isEqualTo(new Decision(false, 0, 50_000, 52_000));
		assertThat(decide(this.threePerMinute, T0 + 61_999).allowed()).isFalse();
		assertThat(decide(this.threePerMinute, T0 + 62_000)).isEqualTo(new Decision(true, 0, 1_000, 0));
	}

	@Test
	void aClockSteppingBackGivesNoFreshQuota() {
		// requests at t = 10 s, then the Redis clock reads 9 s (failover to a lagging replica)
		assertThat(burst(this.threePerMinute, T0 + 10_000, 2)).isEqualTo(2);
		assertThat(decide(this.threePerMinute, T0 + 9_000)).isEqualTo(new Decision(true, 0, 61_000, 0));
		assertThat(decide(this.threePerMinute, T0 + 9_000)).isEqualTo(new Decision(false, 0, 61_000, 61_000));
		// the request made at 9 s was logged at 10 s, beside the others: all three leave at 70 s
		assertThat(decide(this.threePerMinute, T0 + 69_999).allowed()).isFalse();
		assertThat(burst(this.threePerMinute, T0 + 70_000, 5)).isEqualTo(3);
	}

	@Test
	void aChangedWindowCountsTheSameTimesAgainstTheNewLength() {
		assertThat(burst(this.threePerMinute, T0, 3)).isEqualTo(3);
		WindowPolicy threePerHour = policy(Algorithm.SLIDING_LOG, 3, Duration.ofHours(1));
		assertThat(decide(threePerHour, T0 + 120_000)).isEqualTo(new Decision(false, 0, 3_480_000, 3_480_000));
		WindowPolicy threePerTenSeconds = policy(Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(10));
		assertThat(burst(threePerTenSeconds, T0 + 120_000, 5)).isEqualTo(3);
	}

	/**
	 * A refund rewrites the entries on the shorter side of the refunded one (those before it, and the count
	 * before the oldest; or those after it), and an entry it empties goes: the client stands where one whose
	 * requests cost what they turned out to would, at every later time.
	 */
	@Test
	void aRefundRewritesTheShorterSideAndDropsAnEntryItEmpties() {
		WindowPolicy ten = policy(Algorithm.SLIDING_LOG, 10, Duration.ofMinutes(1));
		String twin = "test:{" + UUID.randomUUID() + "}:twin";
		long[] costs = { 1, 1, 4, 1, 1, 1 };
		// the 4 of 2 s turn out to cost 1 (two entries before it, three after), the 1 of 4 s nothing
		long[] actual = { 1, 1, 1, 1, 0, 1 };
		List<Verdict> reserved = new ArrayList<>();
		for (int i = 0; i < costs.length; i++) {
			reserved.add(this.script.decide(List.of(new LimitScript.Limit(this.key, ten)), costs[i],
					Long.toString(T0 + 1_000 * i)).block(TIMEOUT));
			if (actual[i] > 0) {
				this.script.decideOne(twin, ten, actual[i], Long.toString(T0 + 1_000 * i)).block(TIMEOUT);
			}
		}
		String markers = RedisKeys.settledMarkers("wrl:{" + UUID.randomUUID() + "}:r:wlog", T0 / 60_000);
		for (int i : new int[] { 2, 4 }) {
			Settlement settled = this.script.settle(List.of(this.key), markers, "r" + i, List.of(ten),
					List.of(reserved.get(i).decisions().get(0).resetMillis()), reserved.get(i).now(), costs[i], actual[i],
					Long.toString(T0 + 5_500)).block(TIMEOUT);
			assertThat(settled.changes()).containsExactly(actual[i] - costs[i]);
		}
		for (long now : new long[] { T0 + 6_000, T0 + 60_500, T0 + 61_000, T0 + 62_000, T0 + 63_000, T0 + 64_000,
				T0 + 65_000 }) {
			assertThat(this.script.decideOne(this.key, ten, 0, Long.toString(now)).block(TIMEOUT)).as("at %d", now - T0)
				.isEqualTo(this.script.decideOne(twin, ten, 0, Long.toString(now)).block(TIMEOUT));
		}
		// five units left; two must leave for 7 more: those of T0 and T0 + 1 s
		assertThat(this.script.decideOne(this.key, ten, 7, Long.toString(T0 + 6_000)).block(TIMEOUT))
			.isEqualTo(new Decision(false, 5, 54_000, 55_000));
		// the entry of 4 s, emptied, went: five entries in a ring of six
		assertThat(valueBytes()).isEqualTo(12 + 8 * 6);
		String value = stored();
		assertThat(value.charAt(7)).isEqualTo((char) 5);
	}

	/**
	 * Writes a key as the previous version of the ring did (key suffix ring): an 8-byte header, the slot of the
	 * oldest kept time and how many are kept (two big-endian uint32), then {@code capacity} slots, one big-endian
	 * double per unit of cost, the times from the oldest on; expiring in ten minutes.
	 */
	void storeFormer(String key, int oldest, int capacity, long... times) {
		List<String> args = new ArrayList<>(List.of(Integer.toString(oldest), Integer.toString(capacity)));
		for (long time : times) {
			args.add(Long.toString(time));
		}
		String lua = "local oldest, capacity = tonumber(ARGV[1]), tonumber(ARGV[2]) local slots = {} "
				+ "for i = 1, capacity do slots[i] = string.rep('\\0', 8) end "
				+ "for i = 3, #ARGV do slots[(oldest + i - 3) % capacity + 1] = struct.pack('>d', tonumber(ARGV[i])) end "
				+ "return redis.call('SET', KEYS[1], struct.pack('>I4I4', oldest, #ARGV - 2) .. table.concat(slots), 'PX', 600000)";
		this.redis.execute(RedisScript.of(lua, String.class), List.of(key), args).blockFirst(TIMEOUT);
	}

	private String dump(String key) {
		return this.redis.execute(RedisScript.of("return redis.call('DUMP', KEYS[1])", String.class), List.of(key))
			.blockFirst(TIMEOUT);
	}

	/**
	 * A rolling upgrade: instances of the previous version counted this client in the previous layout's key.
	 * Its units count here too (no fresh quota), read once into a key of this layout, and the previous one is
	 * left for the instances still writing it; the second limit of a route (keys numbered 2) alike.
	 */
	@Test
	void aKeyOfThePreviousLayoutIsReadIntoThisOneAndLeftAsItWas() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		for (String place : List.of("", "2")) {
			String client = UUID.randomUUID().toString();
			String former = RedisKeys.of("orders", client, "ring" + place);
			String key = RedisKeys.of("orders", client, Algorithm.SLIDING_LOG.keySuffix() + place);
			// a request of 3 at T0 and one of 1 at 30 s, the ring wrapped (its oldest time in slot 3 of 5)
			storeFormer(former, 3, 5, T0, T0, T0, T0 + 30_000);
			String before = dump(former);
			assertThat(this.script.decideOne(key, five, 0, Long.toString(T0 + 40_000)).block(TIMEOUT))
				.as("a read").isEqualTo(new Decision(true, 1, 20_000, 0));
			assertThat(this.script.decideOne(key, five, 1, Long.toString(T0 + 40_000)).block(TIMEOUT))
				.isEqualTo(new Decision(true, 0, 20_000, 0));
			assertThat(this.script.decideOne(key, five, 1, Long.toString(T0 + 59_999)).block(TIMEOUT))
				.isEqualTo(new Decision(false, 0, 1, 1));
			// the three units of T0 leave together
			assertThat(this.script.decideOne(key, five, 3, Long.toString(T0 + 60_000)).block(TIMEOUT))
				.isEqualTo(new Decision(true, 0, 30_000, 0));
			assertThat(dump(former)).as("the previous layout's key is never written").isEqualTo(before);
		}
	}

	/** A key of the previous layout that is not one (damaged, or another value) is no error: nothing is read. */
	@Test
	void aDamagedKeyOfThePreviousLayoutIsNoError() {
		WindowPolicy five = policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
		for (String value : List.of("garbage", "0123456789", "")) {
			String client = UUID.randomUUID().toString();
			this.redis.opsForValue().set(RedisKeys.of("orders", client, "ring"), value).block(TIMEOUT);
			String key = RedisKeys.of("orders", client, Algorithm.SLIDING_LOG.keySuffix());
			assertThat(this.script.decideOne(key, five, 1, Long.toString(T0)).block(TIMEOUT))
				.isEqualTo(new Decision(true, 4, 60_000, 0));
		}
		// a header counting more times than the ring has slots
		String client = UUID.randomUUID().toString();
		storeFormer(RedisKeys.of("orders", client, "ring"), 0, 2, T0, T0);
		this.redis.opsForValue().set(RedisKeys.of("orders", client, "ring"), "\0\0\0\0\0\0\0\11", 0L).block(TIMEOUT);
		String key = RedisKeys.of("orders", client, Algorithm.SLIDING_LOG.keySuffix());
		assertThat(this.script.decideOne(key, five, 1, Long.toString(T0)).block(TIMEOUT))
			.isEqualTo(new Decision(true, 4, 60_000, 0));
	}

}
