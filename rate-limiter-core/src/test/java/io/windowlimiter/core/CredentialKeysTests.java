package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.windowlimiter.core.access.ClientAccess;
import io.windowlimiter.core.access.RouteLists;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.ScanOptions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Routes keyed by credentials ({@code credential-keys: true}, which the adapters set for apiKeyResolver and a
 * headerKeyResolver on a credential header), decided by the core against a real Redis: the key is hashed
 * where it enters, so no Redis key, denial or operator's read holds it; routes of other keys keep their
 * Redis keys as they were.
 */
class CredentialKeysTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private static final String SECRET = "a-test-secret-of-32-characters!!";

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final String run = Long.toString(System.nanoTime(), 36);

	private final List<String> denied = new ArrayList<>();

	private RateLimiterCore core;

	@BeforeEach
	void start() {
		this.core = RateLimiterCore.of(new LimitScript(this.redis),
				new RedisGuard(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(10)),
				new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), RateLimitMetrics.NONE, Clock.systemUTC());
		this.core.setClientKeyHash(new ClientKeyHash(SECRET));
		this.core.setDenialListener((routeId, clientKey) -> this.denied.add(clientKey));
	}

	private String route(String name, String... args) {
		String id = name + "-" + this.run;
		Map<String, Object> all = new HashMap<>(Map.of("window-rate-limiter.algorithm", "sliding-log",
				"window-rate-limiter.limit", "2", "window-rate-limiter.window", "1h"));
		for (int i = 0; i < args.length; i += 2) {
			all.put("window-rate-limiter." + args[i], args[i + 1]);
		}
		this.core.configure(id, all);
		return id;
	}

	private boolean passes(String routeId, String key) {
		return this.core.admit(routeId, key, Mono.empty()).block(WAIT).passes();
	}

	private List<String> redisKeys(String routeId) {
		return this.redis.scan(ScanOptions.scanOptions().match("wrl:*" + routeId + "*").build()).collectList().block(WAIT);
	}

	@Test
	void aCredentialIsHashedWhereItEntersAndNowhereInClear() {
		String routeId = route("api", "credential-keys", "true");
		String token = "sk-" + this.run;
		String hash = new ClientKeyHash(SECRET).of(token);
		assertThat(passes(routeId, token)).isTrue();
		assertThat(passes(routeId, token)).isTrue();
		assertThat(passes(routeId, token)).isFalse();
		assertThat(passes(routeId, token)).as("from the deny cache").isFalse();
		assertThat(redisKeys(routeId)).containsExactly(RedisKeys.of(routeId, hash, "wlog"))
			.noneMatch(key -> key.contains(token));
		assertThat(this.denied).containsOnly(hash);
		// an operator names the client by its key, or by its hash as the endpoint prints it
		assertThat(this.core.clientKeyOf(routeId, token)).isEqualTo(hash);
		assertThat(this.core.clientKeyOf(routeId, hash)).isEqualTo(hash);
		assertThat(this.core.peek(routeId, hash).block(WAIT).decisions().get(0).remaining()).isZero();
		// the log's key, and its former layout's, which a reset deletes too
		assertThat(this.core.keysOf(routeId, hash)).containsExactly(RedisKeys.of(routeId, hash, "wlog"),
				RedisKeys.of(routeId, hash, "ring"));
	}

	@Test
	void otherRoutesKeepTheirKeysAsTheyWere() {
		String routeId = route("tenant");
		String tenant = "tenant-" + this.run;
		assertThat(passes(routeId, tenant)).isTrue();
		assertThat(redisKeys(routeId)).containsExactly("wrl:{" + tenant + "}:" + routeId + ":wlog");
		assertThat(this.core.clientKeyOf(routeId, tenant)).isEqualTo(tenant);
		// keyless requests share the one key they always had, on either kind of route
		String open = route("open", "credential-keys", "true");
		assertThat(passes(open, RedisKeys.EMPTY_KEY)).isTrue();
		assertThat(redisKeys(open)).containsExactly("wrl:{" + RedisKeys.EMPTY_KEY + "}:" + open + ":wlog");
	}

	@Test
	void listsInConfigurationNameACredentialAsWrittenOrByItsHash() {
		String token = "sk-banned-" + this.run;
		String other = "sk-vip-" + this.run;
		String hash = new ClientKeyHash(SECRET).of(other);
		String routeId = route("listed", "credential-keys", "true", "deny", token, "allow", hash);
		this.core.setClientAccess(new ClientAccess(RouteLists.NONE, null));
		Admission refused = this.core.admit(routeId, token, Mono.empty()).block(WAIT);
		assertThat(refused.forbidden()).isTrue();
		for (int i = 0; i < 3; i++) {
			assertThat(passes(routeId, other)).as("allow-listed by its hash").isTrue();
		}
		assertThat(this.core.accessOf(routeId, token)).as("read by the key").isNotNull();
	}

	/**
	 * The hash of a listed client is shown (the endpoint, topDenied, logs): a client sending it as its key must not
	 * be taken for that client, whether the list names the client by its hash or in clear, nor get an operator's
	 * exemption made by the hash.
	 */
	@Test
	void aClientSendingAListedHashAsItsKeyIsNotTheListedClient() {
		ClientKeyHash hash = new ClientKeyHash(SECRET);
		String vip = "sk-vip-" + this.run;
		String inClear = "sk-clear-" + this.run;
		String banned = "sk-banned-" + this.run;
		String routeId = route("hash-sent", "credential-keys", "true", "allow", hash.of(vip) + "," + inClear, "deny",
				hash.of(banned));
		this.core.setClientAccess(new ClientAccess(RouteLists.NONE, null));
		assertThat(passes(routeId, vip) && passes(routeId, vip) && passes(routeId, vip)).as("listed by its hash").isTrue();
		assertThat(passes(routeId, inClear) && passes(routeId, inClear) && passes(routeId, inClear)).as("listed in clear")
			.isTrue();
		assertThat(this.core.admit(routeId, banned, Mono.empty()).block(WAIT).forbidden()).as("denied by its hash").isTrue();
		for (String sent : List.of(hash.of(vip), hash.of(inClear))) {
			assertThat(List.of(passes(routeId, sent), passes(routeId, sent), passes(routeId, sent)))
				.as("the hash sent as the key: limited, 2 an hour").containsExactly(true, true, false);
		}
		assertThat(this.core.admit(routeId, hash.of(banned), Mono.empty()).block(WAIT).forbidden())
			.as("the denied hash sent as the key").isFalse();
		// the operator reads the client by the key or by its hash, as the endpoint shows it: both find the list entry
		assertThat(this.core.accessOf(routeId, vip)).isNotNull();
		assertThat(this.core.accessOf(routeId, hash.of(inClear))).isNotNull();
	}

	@Test
	void withoutASecretTheHashIsAPlainSha256() {
		this.core.setClientKeyHash(new ClientKeyHash(null));
		String routeId = route("unkeyed", "credential-keys", "true");
		String token = "sk-" + this.run;
		assertThat(passes(routeId, token)).isTrue();
		assertThat(redisKeys(routeId)).containsExactly(RedisKeys.of(routeId, new ClientKeyHash(null).of(token), "wlog"))
			.allMatch(key -> key.startsWith("wrl:{sha256:"));
	}

	/**
	 * An operator's block and override made before credentials were hashed name the client's key in clear (as
	 * Redis keeps them from an earlier version). After the upgrade they still apply to that client, now known by
	 * its hash; the operator's next change to the client (here a clear, then a block) is written under the hash
	 * and deletes the field in clear, so the credential leaves Redis. Without this, an upgrade lifted every block
	 * of an abuser keyed by its API key.
	 */
	@Test
	void anAssignmentMadeInClearBeforeKeysWereHashedStillAppliesUntilAnOperatorRewritesIt() {
		this.redis.delete(RedisKeys.ASSIGNMENTS, RedisKeys.ASSIGNMENT_EXPIRY, RedisKeys.ASSIGNMENT_VERSION).block(WAIT);
		String routeId = "upgraded-" + this.run;
		String blocked = "sk-blocked-" + this.run;
		String limited = "sk-limited-" + this.run;
		// what an earlier version wrote: the keys as the requests carried them
		PlanAssignments earlier = assignments();
		earlier.block(routeId, blocked, Duration.ofHours(1)).block(WAIT);
		earlier.override(routeId, limited, List.of(Map.of("limit", 1, "window", "1h")), null).block(WAIT);

		PlanAssignments rules = assignments();
		RateLimiterCore core = new RateLimiterCore(new LimitScript(this.redis), new PolicyRegistry(Map.of()), rules,
				false, new RedisGuard(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(10)),
				new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), RateLimitMetrics.NONE, Duration.ofSeconds(10),
				Clock.systemUTC());
		core.setClientKeyHash(new ClientKeyHash(SECRET));
		core.setClientAccess(new ClientAccess(RouteLists.NONE, rules));
		rules.refresh().block(WAIT);
		core.configure(routeId, Map.of("window-rate-limiter.limit", "5", "window-rate-limiter.window", "1h",
				"window-rate-limiter.credential-keys", "true"));

		assertThat(core.admit(routeId, blocked, Mono.empty()).block(WAIT).forbidden()).as("blocked as before").isTrue();
		assertThat(core.admit(routeId, limited, Mono.empty()).block(WAIT).passes()).isTrue();
		assertThat(core.admit(routeId, limited, Mono.empty()).block(WAIT).passes()).as("its override of 1 an hour")
			.isFalse();
		String hash = new ClientKeyHash(SECRET).of(blocked);
		assertThat(rules.access(routeId, hash)).as("found by the hash").isNotNull();

		// the operator lifts the block by the key it knows, and blocks the other client anew
		rules.clearAccess(routeId, core.clientKeyOf(routeId, blocked)).block(WAIT);
		rules.block(routeId, core.clientKeyOf(routeId, limited), Duration.ofHours(1)).block(WAIT);
		assertThat(core.admit(routeId, blocked, Mono.empty()).block(WAIT).passes()).as("the block lifted").isTrue();
		assertThat(core.admit(routeId, limited, Mono.empty()).block(WAIT).forbidden()).as("blocked anew").isTrue();
		Map<String, String> stored = this.redis.<String, String>opsForHash().entries(RedisKeys.ASSIGNMENTS)
			.collectMap(Map.Entry::getKey, Map.Entry::getValue)
			.block(WAIT);
		assertThat(stored.keySet()).as("fields in Redis").noneMatch(field -> field.contains(blocked))
			.anyMatch(field -> field.contains(new ClientKeyHash(SECRET).of(limited)));
		// the override made in clear holds until an operator changes it: its field is the one left in clear
		assertThat(stored.keySet()).filteredOn(field -> field.contains(limited)).hasSize(1);
	}

	private PlanAssignments assignments() {
		return new PlanAssignments(this.redis, Set.of(), Duration.ofMillis(250), 100, Duration.ofSeconds(10),
				System::currentTimeMillis);
	}

}
