package io.windowlimiter.core.plan;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What {@link PlanAssignments} keeps in Redis and reads back, on a real Redis. */
class PlanAssignmentsTests {

	private static final Duration WAIT = Duration.ofSeconds(5);

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private PlanAssignments assignments(long max) {
		return new PlanAssignments(this.redis, Set.of("free", "pro"), Duration.ofMillis(250), max,
				Duration.ofSeconds(10), System::currentTimeMillis);
	}

	@BeforeEach
	void empty() {
		this.redis.delete(RedisKeys.ASSIGNMENTS, RedisKeys.ASSIGNMENT_EXPIRY, RedisKeys.ASSIGNMENT_VERSION).block(WAIT);
	}

	@Test
	void hostileTargetsAndClientKeysReadBackAsWritten() {
		PlanAssignments assignments = assignments(100);
		List<String> hostile = List.of("{x}", "a\nb", "1:", "", "ключ", "x".repeat(5000));
		for (String client : hostile) {
			assignments.assign("1:" + client, client, "pro", null).block(WAIT);
		}
		PlanAssignments reader = assignments(100);
		reader.refresh().block(WAIT);
		for (String client : hostile) {
			assertThat(reader.find("1:" + client, client)).as(client).isNotNull();
			// a length-prefixed field: no other split of the same characters finds it
			assertThat(reader.find("1", ":" + client + client)).isNull();
		}
	}

	@Test
	void anOverrideReadsBackAsTheSameCheckedLimits() {
		PlanAssignments assignments = assignments(100);
		assignments.override("orders", "alice", List.of(Map.of("name", "a&b=c\n\"d\"", "limit", 7, "window", "1m"),
				Map.of("limit", 100, "window", "1h", "algorithm", "fixed-window", "scope", "api")), null).block(WAIT);
		PlanAssignments reader = assignments(100);
		reader.refresh().block(WAIT);
		assertThat(reader.find("orders", "alice").limits()).extracting(RouteLimit::name, RouteLimit::scope)
			.containsExactly(org.assertj.core.groups.Tuple.tuple("a&b=c\n\"d\"", null),
					org.assertj.core.groups.Tuple.tuple("api", "api"));
		assertThatThrownBy(() -> assignments.override("orders", "bob", List.of(Map.of("limit", 7)), null))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on override for 'orders': limits[0].window is missing; allowed: a duration "
					+ "of whole milliseconds from 1ms to 366d, such as 500ms, 10s, 1m, 1h or 1d");
	}

	@Test
	void theNumberOfAssignmentsIsBoundedButReplacingOneIsAlwaysAllowed() {
		PlanAssignments assignments = assignments(2);
		assignments.assign("orders", "a", "free", null).block(WAIT);
		assignments.assign("orders", "b", "free", null).block(WAIT);
		assertThatThrownBy(() -> assignments.assign("orders", "c", "free", null).block(WAIT))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageStartingWith("Not assigned: 2 assignments already, the most allowed");
		assignments.assign("orders", "b", "pro", null).block(WAIT);
		assertThat(assignments.find("orders", "b").plan()).isEqualTo("pro");
		assignments.clear("orders", "a").block(WAIT);
		assignments.assign("orders", "c", "free", null).block(WAIT);
		assertThat(assignments.find("orders", "c")).isNotNull();
	}

	@Test
	void expiredAssignmentsAreIgnoredAtOnceAndDroppedOnTheNextWrite() throws InterruptedException {
		PlanAssignments assignments = assignments(100);
		assignments.assign("orders", "brief", "pro", Duration.ofMillis(200)).block(WAIT);
		assertThat(assignments.find("orders", "brief")).isNotNull();
		Thread.sleep(300);
		assertThat(assignments.find("orders", "brief")).isNull();
		assertThat(this.redis.opsForHash().size(RedisKeys.ASSIGNMENTS).block(WAIT)).isEqualTo(1);
		assignments.assign("orders", "other", "free", null).block(WAIT);
		assertThat(this.redis.opsForHash().keys(RedisKeys.ASSIGNMENTS).collectList().block(WAIT))
			.containsExactly("6:ordersother");
		assertThat(this.redis.opsForZSet().size(RedisKeys.ASSIGNMENT_EXPIRY).block(WAIT)).isZero();
	}

	@Test
	void anExpiryBeyondTenYearsIsRefusedNamingTheMost() {
		assertThatThrownBy(() -> assignments(100).assign("orders", "forever", "pro", Duration.ofDays(1_000_000)).block(WAIT))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessage("ttl must be at most PT87600H (10 years), was PT24000000H");
		assertThat(this.redis.opsForHash().size(RedisKeys.ASSIGNMENTS).block(WAIT)).isZero();
	}

	@Test
	void anAssignmentWithoutExpiryClearsAnEarlierExpiry() throws InterruptedException {
		PlanAssignments assignments = assignments(100);
		assignments.assign("orders", "c", "pro", Duration.ofMillis(100)).block(WAIT);
		assignments.assign("orders", "c", "pro", null).block(WAIT);
		Thread.sleep(200);
		assignments.assign("orders", "d", "free", null).block(WAIT);
		assertThat(assignments.find("orders", "c")).isNotNull();
	}

	/** Loaded before the web server serves: a client held by an override is held from the first request. */
	@Test
	void aStartedInstanceHasTheAssignmentsBeforeTheWebServerStarts() {
		assignments(100).assign("orders", "held", "free", null).block(WAIT);
		PlanAssignments restarted = assignments(100);
		assertThat(restarted.getPhase()).isLessThan(WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE);
		restarted.start();
		try {
			assertThat(restarted.find("orders", "held")).as("loaded when start() returns").isNotNull();
		}
		finally {
			restarted.stop();
		}
	}

	/** A reload never installs what is older than what an instance has, and decodes off Redis's I/O thread. */
	@Test
	void anOlderSnapshotIsNeverInstalledAfterANewerOne() {
		PlanAssignments writer = assignments(100);
		writer.assign("orders", "x", "pro", null).block(WAIT);
		PlanAssignments reader = assignments(100);
		List<String> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
		reader.onChange(() -> threads.add(Thread.currentThread().getName()));
		assertThat(reader.refresh().block(WAIT)).isTrue();
		assertThat(threads).singleElement().asString().startsWith("boundedElastic");
		long version = Long.parseLong(this.redis.opsForValue().get(RedisKeys.ASSIGNMENT_VERSION).block(WAIT));
		// what a read made before the last write would have seen: an older version with other contents
		this.redis.opsForHash().put(RedisKeys.ASSIGNMENTS, "6:ordersx", "0\nplan\nfree").block(WAIT);
		this.redis.opsForValue().set(RedisKeys.ASSIGNMENT_VERSION, Long.toString(version - 1)).block(WAIT);
		assertThat(reader.refresh().block(WAIT)).isFalse();
		assertThat(reader.find("orders", "x").plan()).isEqualTo("pro");
	}

	/** Versions keep growing when Redis loses the keys, so every instance takes what is written after. */
	@Test
	void afterTheKeysAreLostEveryInstanceTakesWhatIsWrittenNext() {
		PlanAssignments writer = assignments(100);
		for (int i = 0; i < 3; i++) {
			writer.assign("orders", "before-" + i, "pro", null).block(WAIT);
		}
		PlanAssignments reader = assignments(100);
		reader.refresh().block(WAIT);
		empty();
		assertThat(reader.refresh().block(WAIT)).as("none in Redis: none here").isTrue();
		assertThat(reader.find("orders", "before-0")).isNull();
		writer.assign("orders", "after", "free", null).block(WAIT);
		assertThat(reader.refresh().block(WAIT)).isTrue();
		assertThat(reader.find("orders", "after")).isNotNull();
	}

	@Test
	void reloadingTenThousandAssignmentsTakesLittleTime() {
		PlanAssignments writer = assignments(100_000);
		String run = UUID.randomUUID().toString().substring(0, 8);
		// written straight into the hash: 10,000 writes through the script would only slow the test
		Map<String, String> entries = new java.util.HashMap<>();
		for (int i = 0; i < 10_000; i++) {
			String client = run + "-" + i;
			entries.put("6:orders" + client, "0\nplan\npro");
		}
		this.redis.opsForHash().putAll(RedisKeys.ASSIGNMENTS, entries).block(WAIT);
		writer.assign("orders", "last", "free", null).block(WAIT);
		PlanAssignments reader = assignments(100_000);
		long started = System.nanoTime();
		reader.refresh().block(WAIT);
		long millis = Duration.ofNanos(System.nanoTime() - started).toMillis();
		System.out.println("Reloaded 10,001 assignments in " + millis + " ms");
		assertThat(reader.find("orders", run + "-9999").plan()).isEqualTo("pro");
		assertThat(millis).isLessThan(1_000);
	}

}
