package io.windowlimiter.core.access;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.Admission;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Allow and deny lists and operators' blocks and exemptions, decided by the core against a real Redis:
 * a listed client is answered without a Redis call (the server's own count of scripts run does not move)
 * and counted by its outcome; a run-time rule's end is read on an explicit clock, moved past it.
 */
class AccessListTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final String run = Long.toString(System.nanoTime(), 36);

	/** This instance's clock, as the rules' ends are read against it. */
	private final AtomicLong clock = new AtomicLong(System.currentTimeMillis());

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private PlanAssignments rules;

	private RateLimiterCore core;

	@BeforeEach
	void start() {
		this.redis.delete(RedisKeys.ASSIGNMENTS, RedisKeys.ASSIGNMENT_EXPIRY, RedisKeys.ASSIGNMENT_VERSION).block(WAIT);
		this.rules = new PlanAssignments(this.redis, Set.of(), Duration.ofMillis(250), 4, Duration.ofSeconds(10),
				this.clock::get);
		this.core = new RateLimiterCore(new LimitScript(this.redis), new PolicyRegistry(Map.of()), this.rules, false,
				new RedisGuard(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(10)),
				new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(this.meters),
				Duration.ofSeconds(10), Clock.systemUTC());
		this.core.setClientAccess(new ClientAccess(new RouteLists(ClientList.of(List.of("vip", "198.51.100.0/24")),
				ClientList.of(List.of("banned", "g-only"))), this.rules));
	}

	/** A route of 1 request per hour, with these extra args. */
	private String route(String name, String... args) {
		String id = name + "-" + this.run;
		Map<String, String> all = new java.util.HashMap<>(Map.of("window-rate-limiter.algorithm", "sliding-log",
				"window-rate-limiter.limit", "1", "window-rate-limiter.window", "1h"));
		for (int i = 0; i < args.length; i += 2) {
			all.put("window-rate-limiter." + args[i], args[i + 1]);
		}
		this.core.configure(id, Map.copyOf(all));
		return id;
	}

	private Admission admit(String route, String client) {
		return this.core.admit(route, client, Mono.empty()).block(WAIT);
	}

	/** The fewest scripts Redis ran in one run of some work, and how many times the work ran. */
	private record ScriptsSeen(long fewest, int runs) {
	}

	/**
	 * Runs {@code work} and counts the scripts Redis ran meanwhile. The server is shared with the fork's other
	 * tests, whose late calls can land in the window (one did, once, in a full run), so a window without any
	 * is looked for, up to 3 times: work that sends scripts of its own sends them every time.
	 */
	private ScriptsSeen scriptsWhile(Runnable work) {
		long fewest = Long.MAX_VALUE;
		int runs = 0;
		while (fewest > 0 && runs < 3) {
			long before = scriptsRun();
			work.run();
			runs++;
			fewest = Math.min(fewest, scriptsRun() - before);
		}
		return new ScriptsSeen(fewest, runs);
	}

	/** Scripts the Redis server ran so far, from its INFO commandstats (EVAL and EVALSHA). */
	private long scriptsRun() {
		Properties stats = this.redis.getConnectionFactory().getReactiveConnection().serverCommands()
			.info("commandstats").block(WAIT);
		long calls = 0;
		for (String command : List.of("cmdstat_evalsha", "cmdstat_eval")) {
			String line = stats.getProperty(command, "calls=0,");
			calls += Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(',', line.indexOf("calls="))));
		}
		return calls;
	}

	private double decisions(String route, String outcome) {
		return this.meters.find("gateway.ratelimit.decisions").tags("route", route, "outcome", outcome).counters()
			.stream().mapToDouble(counter -> counter.count()).sum();
	}

	@Test
	void anAllowListedClientIsNeverLimitedNeverSentToRedisAndCountedAsExempt() {
		String route = route("allowed", "allow", "monitor, 10.0.0.0/8, 2001:db8::/32");
		ScriptsSeen scripts = scriptsWhile(() -> {
			for (String client : List.of("monitor", "10.1.2.3", "2001:db8:1:2::/64")) {
				for (int i = 0; i < 5; i++) {
					Admission admission = admit(route, client);
					assertThat(admission.passes()).as(client).isTrue();
					assertThat(admission.headers()).as("no limit was asked, so none is reported").isEmpty();
				}
			}
		});
		assertThat(scripts.fewest()).as("no Redis call").isZero();
		assertThat(decisions(route, "exempt")).isEqualTo(15 * scripts.runs());
		assertThat(this.core.keysOf(route, "monitor").stream().map(key -> this.redis.hasKey(key).block(WAIT)))
			.containsOnly(false);
		// anyone else is limited as before
		assertThat(admit(route, "11.0.0.1").passes()).isTrue();
		Admission refused = admit(route, "11.0.0.1");
		assertThat(refused.passes()).isFalse();
		assertThat(refused.status()).as("the adapter's usual 429").isZero();
	}

	@Test
	void aDenyListedClientIsRefusedWith403WithoutRetryAfterOrRedis() {
		String route = route("denied", "deny", "abuser,192.0.2.0/24");
		ScriptsSeen scripts = scriptsWhile(() -> {
			for (String client : List.of("abuser", "192.0.2.77")) {
				Admission admission = admit(route, client);
				assertThat(admission.passes()).isFalse();
				assertThat(admission.status()).isEqualTo(Admission.FORBIDDEN);
				assertThat(admission.headers()).as("no wait ends a listed denial: no Retry-After").isEmpty();
				assertThat(admission.violated()).isEmpty();
			}
		});
		assertThat(scripts.fewest()).as("no Redis call").isZero();
		assertThat(decisions(route, "blocked")).isEqualTo(2 * scripts.runs());
		assertThat(admit(route, "192.0.3.1").passes()).isTrue();
	}

	/** The most specific word wins: a route's list over the gateway's; deny over allow where they overlap. */
	@Test
	void aRoutesListsComeBeforeTheGatewaysAndDenyBeforeAllow() {
		String plain = route("plain");
		String forgiving = route("forgiving", "allow", "banned");
		String strict = route("strict", "deny", "vip,198.51.100.7");
		assertThat(admit(plain, "banned").status()).isEqualTo(403);
		assertThat(admit(forgiving, "banned").passes()).as("the route's allow list over the gateway's deny list")
			.isTrue();
		assertThat(admit(forgiving, "g-only").status()).isEqualTo(403);
		for (int i = 0; i < 3; i++) {
			assertThat(admit(plain, "vip").passes()).isTrue();
			assertThat(admit(plain, "198.51.100.7").passes()).isTrue();
		}
		assertThat(admit(strict, "vip").status()).isEqualTo(403);
		assertThat(admit(strict, "198.51.100.7").status()).as("a listed address within an allowed range").isEqualTo(403);
		assertThat(admit(strict, "198.51.100.8").passes()).isTrue();
	}

	/**
	 * An operator's block: 403 with Retry-After the time left, on every route it was made on, until it ends on
	 * the clock; before a route's allow list. Then the client's limits decide again.
	 */
	@Test
	void aBlockRefusesUntilItEndsOnTheClockWithRetryAfterTheTimeLeft() {
		String route = route("blocking", "allow", "partner");
		this.rules.block(route, "mallory", Duration.ofMinutes(10)).block(WAIT);
		this.rules.block(route, "partner", Duration.ofMinutes(10)).block(WAIT);
		ScriptsSeen scripts = scriptsWhile(() -> {
			Admission blocked = admit(route, "mallory");
			assertThat(blocked.status()).isEqualTo(403);
			assertThat(blocked.headers()).containsExactly(Map.entry("Retry-After", "600"));
			assertThat(admit(route, "partner").status()).as("a block over the route's allow list").isEqualTo(403);
		});
		assertThat(scripts.fewest()).as("no Redis call").isZero();
		assertThat(admit(route("elsewhere"), "mallory").passes()).as("only where it was made").isTrue();

		this.clock.addAndGet(Duration.ofMinutes(9).toMillis());
		assertThat(admit(route, "mallory").headers()).containsExactly(Map.entry("Retry-After", "60"));
		this.clock.addAndGet(Duration.ofMinutes(1).toMillis());
		Admission after = admit(route, "mallory");
		assertThat(after.passes()).as("ended: its limit decides").isTrue();
		assertThat(after.headers()).containsKey("RateLimit");
		assertThat(admit(route, "partner").headers()).as("its allow list again").isEmpty();
	}

	/** An exemption on a scope frees the client on every route naming it, before the route's deny list. */
	@Test
	void anExemptionOnAScopeLiftsTheRoutesLimitsAndDenyListUntilCleared() {
		String scope = "api-" + this.run;
		String route = route("scoped", "scope", scope, "deny", "carol");
		this.rules.exempt(scope, "carol", null).block(WAIT);
		this.rules.exempt(scope, "dave", null).block(WAIT);
		for (int i = 0; i < 4; i++) {
			assertThat(admit(route, "carol").passes()).isTrue();
			assertThat(admit(route, "dave").passes()).isTrue();
		}
		assertThat(this.core.accessOf(route, "dave").source()).isEqualTo(Access.RUN_TIME);
		assertThat(this.core.accessOf(scope, "dave").target()).isEqualTo(scope);
		this.clock.addAndGet(Duration.ofDays(3000).toMillis());
		assertThat(admit(route, "dave").passes()).as("until cleared, not until some time").isTrue();
		this.rules.clearAccess(scope, "carol").block(WAIT);
		this.rules.clearAccess(scope, "dave").block(WAIT);
		assertThat(admit(route, "carol").status()).as("its route's deny list again").isEqualTo(403);
		assertThat(admit(route, "dave").passes()).as("its first request under the limit").isTrue();
		assertThat(admit(route, "dave").passes()).isFalse();
		assertThat(this.core.accessOf(route, "dave")).isNull();
	}

	/** Rules are kept with the assignments: under the same bound, and apart from a client's plan or override. */
	@Test
	void rulesShareTheAssignmentsBoundAndLeaveTheClientsOverride() {
		String route = route("bounded");
		this.rules.override(route, "erin", List.of(Map.of("limit", 3, "window", "1h")), null).block(WAIT);
		this.rules.block(route, "erin", Duration.ofHours(1)).block(WAIT);
		this.rules.exempt(route, "frank", null).block(WAIT);
		this.rules.exempt(route, "gina", null).block(WAIT);
		assertThatThrownBy(() -> this.rules.block(route, "hank", Duration.ofHours(1)).block(WAIT))
			.hasMessageStartingWith("Not assigned: 4 assignments already, the most allowed");
		assertThat(admit(route, "erin").status()).isEqualTo(403);
		this.rules.clearAccess(route, "erin").block(WAIT);
		assertThat(this.rules.find(route, "erin")).as("the override stays").isNotNull();
		assertThat(admit(route, "erin").headers().get("RateLimit-Policy")).isEqualTo("\"" + route + "\";q=3;w=3600");
		PlanAssignments reader = new PlanAssignments(this.redis, Set.of(), Duration.ofMillis(250), 4,
				Duration.ofSeconds(10), System::currentTimeMillis);
		reader.refresh().block(WAIT);
		assertThat(reader.access(route, "frank").kind()).as("read back by another instance").isEqualTo(AccessRule.Kind.EXEMPT);
		assertThat(reader.access(route, "erin")).isNull();
	}

}
