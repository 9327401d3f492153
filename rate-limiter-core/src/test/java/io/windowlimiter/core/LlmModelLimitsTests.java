package io.windowlimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.operations.ChangeBroadcast;
import io.windowlimiter.core.operations.DeniedClients;
import io.windowlimiter.core.operations.RateLimitOperations;
import io.windowlimiter.core.operations.RateLimitOperations.LimitStanding;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Limits per model (issue 45): a limit with {@code model} counts only the calls whose body names a model it
 * matches, in the one admission and the one settle of the route's other limits; other calls leave its keys
 * untouched. Through the core on the real Redis, on the route's own limits, a plan's and an override's.
 */
class LlmModelLimitsTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final ReactiveStringRedisTemplate redis = RedisTestServer.get().template();

	private final RedisGuard guard = new RedisGuard(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(10));

	private final PlanAssignments assignments = new PlanAssignments(this.redis, Set.of("free", "pro"),
			Duration.ofMillis(250), 10_000, Duration.ofSeconds(10), System::currentTimeMillis);

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final RateLimiterCore core = new RateLimiterCore(new LimitScript(this.redis), new PolicyRegistry(plans()),
			this.assignments, false, this.guard, new DenyCache(1_000, System::nanoTime), new LocalWindowLimiter(1_000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), new RateLimitMetrics(this.registry),
			Duration.ofSeconds(10), Clock.systemUTC());

	private final String client = "llm-model-" + UUID.randomUUID();

	private final String route = "chat-" + UUID.randomUUID();

	@AfterEach
	void close() {
		this.assignments.clear(this.route, this.client).block(TIMEOUT);
		this.guard.close();
	}

	/** free and pro, each a token limit of every model and one of gpt-4o's, listed in other orders. */
	private static Map<String, Map<String, String>> plans() {
		Map<String, Map<String, String>> plans = new LinkedHashMap<>();
		plans.put("free", Map.of("limits[0].limit", "1000", "limits[0].window", "1d", "limits[0].unit", "tokens",
				"limits[0].name", "tokens", "limits[1].limit", "300", "limits[1].window", "1d", "limits[1].unit",
				"tokens", "limits[1].model", "gpt-4o*", "limits[1].name", "gpt-4o-tokens"));
		plans.put("pro", Map.of("limits[0].limit", "900", "limits[0].window", "1d", "limits[0].unit", "tokens",
				"limits[0].model", "gpt-4o*", "limits[0].name", "gpt-4o-tokens", "limits[1].limit", "5000",
				"limits[1].window", "1d", "limits[1].unit", "tokens", "limits[1].name", "tokens"));
		return plans;
	}

	/** The route: requests, tokens of every model, tokens of gpt-4o*, and calls of claude-* a day. */
	private void chat() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].limit", "60");
		args.put("window-rate-limiter.limits[0].window", "1m");
		args.put("window-rate-limiter.limits[1].limit", "1000");
		args.put("window-rate-limiter.limits[1].window", "1m");
		args.put("window-rate-limiter.limits[1].unit", "tokens");
		args.put("window-rate-limiter.limits[2].limit", "300");
		args.put("window-rate-limiter.limits[2].window", "1m");
		args.put("window-rate-limiter.limits[2].unit", "tokens");
		args.put("window-rate-limiter.limits[2].model", "gpt-4o*");
		args.put("window-rate-limiter.limits[3].limit", "2");
		args.put("window-rate-limiter.limits[3].window", "1d");
		args.put("window-rate-limiter.limits[3].model", "claude-*");
		this.core.configure(this.route, args, SlotRelease.ALWAYS, true);
	}

	private Admission call(long tokens, String model) {
		return this.core.admitTokens(this.route, this.client, tokens, model, Mono.empty()).block(TIMEOUT);
	}

	/** Each limit of the client's policy, read at cost 0: the calls of every model. */
	private List<Long> remaining() {
		return this.core.peek(this.route, this.client)
			.block(TIMEOUT)
			.decisions()
			.stream()
			.map(decision -> decision.remaining())
			.toList();
	}

	/** The client's keys in Redis: its hash tag is in each. */
	private List<String> keys() {
		return this.redis.keys("*" + this.client + "*").collectList().block(TIMEOUT).stream().sorted().toList();
	}

	@Test
	void aModelLimitCountsOnlyTheCallsOfItsModelsAndOthersWriteNoKeyOfIt() {
		chat();
		Admission mini = call(200, "gpt-4o-mini");
		assertThat(mini.passes()).isTrue();
		assertThat(mini.reservation().costs()).as("requests, every model's tokens, gpt-4o*'s tokens")
			.containsExactly(1, 200, 200);
		assertThat(mini.headers().get("RateLimit-Policy")).as("the limits deciding the call")
			.isEqualTo("\"" + this.route + "-0\";q=60;w=60, \"" + this.route + "-1\";q=1000;w=60, \"" + this.route
					+ "-2\";q=300;w=60");
		List<String> afterGpt = keys();
		assertThat(afterGpt).hasSize(3);

		Admission refused = call(200, "gpt-4o");
		assertThat(refused.passes()).as("gpt-4o*'s 100 left").isFalse();
		assertThat(refused.violated()).containsExactly(this.route + "-2");

		Admission claude = call(500, "claude-sonnet-4");
		assertThat(claude.passes()).as("not gpt-4o*: its 300 do not apply").isTrue();
		assertThat(claude.reservation().costs()).as("requests, every model's tokens, claude-*'s calls")
			.containsExactly(1, 500, 1);
		Admission none = call(100, null);
		assertThat(none.passes()).isTrue();
		assertThat(none.reservation().costs()).as("a call naming no model: the limits of every model only")
			.containsExactly(1, 100);
		assertThat(none.reservation().keys()).isEqualTo(mini.reservation().keys().subList(0, 2));
		assertThat(remaining()).as("60 - 3 calls; 1000 - 800 tokens; gpt-4o* 100 left; claude 1 of 2 left")
			.containsExactly(57L, 200L, 100L, 1L);

		// settled, each limit to its own: gpt-4o*'s tokens by the mini call alone
		this.core.settleTokens(mini.reservation(), 50).block(TIMEOUT);
		this.core.settleTokens(claude.reservation(), 120).block(TIMEOUT);
		this.core.settleTokens(none.reservation(), 30).block(TIMEOUT);
		assertThat(remaining()).containsExactly(57L, 800L, 250L, 1L);
		assertThat(keys()).as("requests, tokens, gpt-4o*'s tokens, claude-*'s calls (and settle markers)")
			.filteredOn(key -> !key.contains(":settled:"))
			.hasSize(4);
	}

	@Test
	void aCallOfOtherModelsLeavesEveryKeyOfAModelLimitUntouched() {
		chat();
		assertThat(call(100, "o3").passes()).isTrue();
		assertThat(call(100, "GPT-4O").passes()).as("a model is matched as written, case included").isTrue();
		assertThat(keys()).as("the route's request and token limits' keys only").hasSize(2);
	}

	@Test
	void aRefusalOfOneModelsCallsIsNotRememberedForAnotherModel() {
		chat();
		assertThat(call(300, "gpt-4o").passes()).isTrue();
		assertThat(call(10, "gpt-4o").passes()).isFalse();
		assertThat(this.core.knownRefusal(this.route, this.client, 20, 2, Mono.empty()).blockOptional(TIMEOUT))
			.as("before the body is read the model is unknown: Redis decides").isEmpty();
		assertThat(call(10, "o3").passes()).as("o3 is not gpt-4o*").isTrue();
		assertThat(call(10, "gpt-4o").passes()).isFalse();
	}

	/**
	 * A change of plan with state in place: what the client used of gpt-4o* under free stays used under pro,
	 * which lists the limits in the other order (a model limit's key follows its model, not its place).
	 */
	@Test
	void aChangeOfPlanKeepsTheTokensUsedOfEachModel() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.plan", "free");
		this.core.configure(this.route, args, SlotRelease.ALWAYS, true);
		Admission onFree = call(250, "gpt-4o");
		assertThat(onFree.reservation().costs()).containsExactly(250, 250);
		this.core.settleTokens(onFree.reservation(), 200).block(TIMEOUT);
		assertThat(call(100, "gpt-4o").passes()).as("free's gpt-4o* 300: 100 left, 100 asked").isTrue();
		assertThat(call(1, "gpt-4o").passes()).isFalse();

		this.assignments.assign(this.route, this.client, "pro", null).block(TIMEOUT);
		assertThat(remaining()).as("pro's gpt-4o* 900 less 300 used; 5,000 less 300").containsExactly(600L, 4700L);
		Admission onPro = call(700, "gpt-4o");
		assertThat(onPro.passes()).as("700 do not fit the 600 left of gpt-4o* under pro").isFalse();
		assertThat(onPro.violated()).containsExactly("gpt-4o-tokens");
		assertThat(call(700, "claude-sonnet-4").passes()).as("another model: pro's 5,000 only").isTrue();
		assertThat(remaining()).containsExactly(600L, 4000L);
	}

	/** An operator's override (the endpoint's JSON fields) may name a model as it names a unit. */
	@Test
	void anOverrideOfAModelLimitLowersThatModelsBudgetOnly() {
		chat();
		this.assignments.override(this.route, this.client,
				List.of(Map.of("limit", "50", "window", "1m", "unit", "tokens", "model", "gpt-4o*")), null)
			.block(TIMEOUT);
		Admission capped = call(100, "gpt-4o");
		assertThat(capped.passes()).as("reserved at the override's 50").isTrue();
		assertThat(capped.reservation().costs()).containsExactly(1, 50, 50);
		assertThat(call(1, "gpt-4o").passes()).isFalse();
		assertThat(call(500, "o3").passes()).isTrue();
	}

	@Test
	void theClientViewShowsEachLimitsModel() {
		chat();
		call(200, "gpt-4o");
		RateLimitOperations operations = new RateLimitOperations(this.core, this.redis,
				new ChangeBroadcast(this.redis, this.core, null, Duration.ofSeconds(5)), DeniedClients.ofDefaults(), null,
				null, Duration.ofSeconds(5));
		List<LimitStanding> limits = operations.standing(this.route, this.client).block(TIMEOUT).limits();
		assertThat(limits).extracting(LimitStanding::model).containsExactly(null, null, "gpt-4o*", "claude-*");
		assertThat(limits).extracting(LimitStanding::unit).containsExactly("requests", "tokens", "tokens", "requests");
		assertThat(limits).extracting(LimitStanding::remaining).containsExactly(59L, 800L, 100L, 2L);
	}

	/**
	 * Tokens per model in the metrics: the tag is a model as configured on a limit that counted the call, else
	 * other; a client naming models by the thousand adds no meter.
	 */
	@Test
	void theTokensMetricIsTaggedWithConfiguredModelsOnly() {
		chat();
		for (String model : new String[] { "gpt-4o", "gpt-4o-mini", "claude-sonnet-4", "o3", "made-up-1", "made-up-2" }) {
			Admission call = call(10, model);
			this.core.metrics().llmCall(this.route, Reservation.modelTag(call.reservation()), 10, 7, "reported", false);
		}
		this.core.metrics().llmCall(this.route, Reservation.modelTag(call(10, null).reservation()), 10, 7, "reported",
				false);
		assertThat(this.registry.find("gateway.ratelimit.llm.tokens")
			.tags("route", this.route, "kind", "settled")
			.counters()
			.stream()
			.collect(java.util.stream.Collectors.toMap(counter -> counter.getId().getTag("model"),
					counter -> counter.count())))
			.isEqualTo(Map.of("gpt-4o*", 14.0, "claude-*", 7.0, "other", 28.0));
	}

	@Test
	void aModelLimitOnARouteThatMetersNoLlmCallsOrABadModelStopsStartUp() {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("window-rate-limiter.limits[0].limit", "60");
		args.put("window-rate-limiter.limits[0].window", "1m");
		args.put("window-rate-limiter.limits[1].limit", "5");
		args.put("window-rate-limiter.limits[1].window", "1m");
		args.put("window-rate-limiter.limits[1].model", "gpt-4o");
		assertThat(catchThrowable(() -> this.core.configure(this.route, args, SlotRelease.ALWAYS, false)))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("window-rate-limiter.limits[1].model is 'gpt-4o' on a route that meters no LLM calls");
		args.put("window-rate-limiter.limits[1].model", "gpt 4o");
		assertThat(catchThrowable(() -> this.core.configure(this.route, args, SlotRelease.ALWAYS, true)))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("window-rate-limiter.limits[1].model is 'gpt 4o'; allowed: a model's name");
		args.put("window-rate-limiter.limits[1].model", "gpt-4o");
		args.put("window-rate-limiter.limits[0].model", "o3");
		args.put("window-rate-limiter.limits[0].unit", "tokens");
		assertThat(catchThrowable(() -> this.core.configure(this.route, args, SlotRelease.ALWAYS, true)))
			.as("a call of another model would pass unlimited")
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("window-rate-limiter.limits[i].model is set on every limit; allowed: at least one "
					+ "limit without model");
	}

}
