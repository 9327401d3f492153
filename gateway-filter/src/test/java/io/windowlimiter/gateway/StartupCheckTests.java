package io.windowlimiter.gateway;

import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;

/** A bad limit in the gateway's route properties stops start-up with a message that says what to fix. */
class StartupCheckTests {

	private static final String ROUTE = "spring.cloud.gateway.server.webflux.routes[0].";

	private static ConfigurableApplicationContext start(String... filterArgs) {
		List<String> properties = new ArrayList<>();
		for (String arg : filterArgs) {
			properties.add(ROUTE + "filters[0].args." + arg);
		}
		return startWith(properties);
	}

	/** A gateway with route 'orders' and the given properties (filters, or global settings). */
	private static ConfigurableApplicationContext startWith(List<String> more) {
		RedisTestServer redis = RedisTestServer.get();
		List<String> properties = new ArrayList<>(List.of("server.port=0",
				"spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
				ROUTE + "id=orders", ROUTE + "uri=http://127.0.0.1:9", ROUTE + "predicates[0]=Path=/orders/**",
				ROUTE + "filters[0].name=RequestRateLimiter",
				ROUTE + "filters[0].args.key-resolver=#{@headerKeyResolver}"));
		properties.addAll(more);
		return new SpringApplicationBuilder(GatewayTestApplication.class).properties(properties.toArray(String[]::new))
			.run();
	}

	/** Why start-up failed: the innermost cause. */
	private static Throwable startUpFailure(String... filterArgs) {
		List<String> properties = new ArrayList<>();
		for (String arg : filterArgs) {
			properties.add(ROUTE + "filters[0].args." + arg);
		}
		return startUpFailure(properties);
	}

	private static Throwable startUpFailure(List<String> properties) {
		List<String> quiet = new ArrayList<>(List.of(GatewayTestApplication.QUIET_REFUSAL));
		quiet.addAll(properties);
		Throwable thrown = catchThrowable(() -> startWith(quiet));
		assertThat(thrown).as("start-up must fail").isNotNull();
		return NestedExceptionUtils.getMostSpecificCause(thrown);
	}

	@Test
	void anUnknownAlgorithmStopsStartUp() {
		assertThat(startUpFailure("rate-limiter=#{@windowRateLimiter}", "window-rate-limiter.algorithm=leaky-bucket",
				"window-rate-limiter.limit=10",
				"window-rate-limiter.window=1m"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.algorithm is 'leaky-bucket'; "
					+ "allowed: one of fixed-window, sliding-log, sliding-window-counter, token-bucket, concurrency");
	}

	/** Route 'orders' with this limiter and no key-resolver; {@code sources} beside the test application. */
	private static ConfigurableApplicationContext startWithoutKeyResolver(Class<?>... sources) {
		RedisTestServer redis = RedisTestServer.get();
		List<Class<?>> all = new ArrayList<>(List.of(GatewayTestApplication.class));
		all.addAll(List.of(sources));
		return new SpringApplicationBuilder(all.toArray(Class<?>[]::new)).properties(GatewayTestApplication.QUIET_REFUSAL)
			.properties("server.port=0",
				"spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(), ROUTE + "id=orders",
				ROUTE + "uri=http://127.0.0.1:9", ROUTE + "predicates[0]=Path=/orders/**",
				ROUTE + "filters[0].name=RequestRateLimiter", ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.limit=10",
				ROUTE + "filters[0].args.window-rate-limiter.window=1m")
			.run();
	}

	/**
	 * Without key-resolver the gateway keys clients by its principalNameKeyResolver, and with nothing that
	 * authenticates every request had an empty key and an empty 403.
	 */
	@Test
	void aRouteWithoutKeyResolverWhoseDefaultCanNeverKeyAClientStopsStartUp() {
		Throwable thrown = catchThrowable(() -> startWithoutKeyResolver().close());
		assertThat(thrown).as("start-up must fail").isNotNull();
		assertThat(NestedExceptionUtils.getMostSpecificCause(thrown))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'orders': key-resolver is not set")
			.hasMessageContaining("principalNameKeyResolver")
			.hasMessageContaining("403")
			.hasMessageContaining("key-resolver: \"#{@headerKeyResolver}\"")
			.hasMessageContaining("\"#{@clientIpKeyResolver}\"");
	}

	/** A KeyResolver bean of the user's is the gateway's default on purpose (its docs' example): kept, and named. */
	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aRouteWithoutKeyResolverKeepsTheUsersOwnDefaultAndSaysSo(CapturedOutput output) {
		try (ConfigurableApplicationContext context = startWithoutKeyResolver(UserKeyResolver.class)) {
			assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultKeyResolver())
				.isSameAs(context.getBean("userKeyResolver"));
			assertThat(output.getOut()).contains("Route 'orders' has no key-resolver: its clients are keyed by the "
					+ "default KeyResolver bean 'userKeyResolver'");
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class UserKeyResolver {

		@Bean
		KeyResolver userKeyResolver() {
			return exchange -> Mono.just("everyone");
		}

	}

	/** Boot's failure analysis block, not a raw stack trace: what was found, and what is allowed. */
	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aRefusalPrintsAsBootsFailureAnalysis(CapturedOutput output) {
		startUpFailure(List.of(ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.limit=10", ROUTE + "filters[0].args.window-rate-limiter.window=60",
				"logging.level.org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter=error"));
		assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START")
			.contains("Description:\n\nThe rate limit of route 'orders' is invalid: window-rate-limiter.window is "
					+ "'60', a number without a unit, which would mean 60 ms.")
			.contains("Action:\n\nSet window-rate-limiter.window of route 'orders' to a duration with its unit: "
					+ "did you mean 60s?");
	}

	@Test
	void aZeroLimitStopsStartUp() {
		assertThat(startUpFailure("rate-limiter=#{@windowRateLimiter}", "window-rate-limiter.limit=0",
				"window-rate-limiter.window=1m"))
			.hasMessageContaining("route 'orders'")
			.hasMessageContaining("window-rate-limiter.limit is '0'");
	}

	@Test
	void aRouteNamingThisLimiterWithoutItsArgumentsStopsStartUp() {
		assertThat(startUpFailure("rate-limiter=#{@windowRateLimiter}"))
			.hasMessageContaining("window-rate-limiter.limit is missing");
	}

	@Test
	void optedInAsTheDefaultARouteNamingNoLimiterIsCheckedAsOurs() {
		assertThat(startUpFailure(List.of("window-rate-limiter.default-limiter=true")))
			.hasMessageContaining("route 'orders'")
			.hasMessageContaining("window-rate-limiter.limit is missing");
	}

	@Test
	void optedInAsTheDefaultThisLimiterIsTheFiltersDefault() {
		try (ConfigurableApplicationContext context = startWith(List.of("window-rate-limiter.default-limiter=true",
				ROUTE + "filters[0].args.window-rate-limiter.limit=10",
				ROUTE + "filters[0].args.window-rate-limiter.window=1m"))) {
			assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultRateLimiter())
				.isInstanceOf(WindowRateLimiter.class);
		}
	}

	@Test
	void aRouteNamingNoLimiterIsTheBuiltInLimitersAndLeftAlone() {
		try (ConfigurableApplicationContext context = start("redis-rate-limiter.replenishRate=10")) {
			assertThat(context.isActive()).isTrue();
		}
	}

	@Test
	void windowArgumentsOnARouteOfAnotherLimiterStopStartUp() {
		// before the opt-in existed, such a route used this limiter; now its limits would be silently ignored
		assertThat(startUpFailure("window-rate-limiter.limit=10", "window-rate-limiter.window=1m"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': rate-limiter is not set, so the gateway's default "
					+ "limiter decides and would ignore the window-rate-limiter.* arguments; allowed: "
					+ "rate-limiter: \"#{@windowRateLimiter}\" on this filter, or "
					+ "window-rate-limiter.default-limiter: true to make the window rate limiter the default");
	}

	@Test
	void twoFiltersWithThisLimiterOnOneRouteStopStartUp() {
		String second = ROUTE + "filters[1].";
		assertThat(startUpFailure(List.of(ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.limit=3", ROUTE + "filters[0].args.window-rate-limiter.window=1m",
				second + "name=RequestRateLimiter", second + "args.rate-limiter=#{@windowRateLimiter}",
				second + "args.key-resolver=#{@clientIpKeyResolver}", second + "args.window-rate-limiter.limit=5",
				second + "args.window-rate-limiter.window=1m")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': RequestRateLimiter with windowRateLimiter appears 2 "
					+ "times; allowed: one per route; put several limits on one key in one filter with "
					+ "window-rate-limiter.limits[i].*; limits on different keys (say per API key and per client IP) "
					+ "on one route are not supported");
	}

	@Test
	void aDefaultFilterWithThisLimiterBesideARoutesOwnStopsStartUp() {
		String defaults = "spring.cloud.gateway.server.webflux.default-filters[0].";
		assertThat(startUpFailure(List.of(ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.limit=3", ROUTE + "filters[0].args.window-rate-limiter.window=1m",
				defaults + "name=RequestRateLimiter", defaults + "args.rate-limiter=#{@windowRateLimiter}",
				defaults + "args.key-resolver=#{@clientIpKeyResolver}", defaults + "args.window-rate-limiter.limit=100",
				defaults + "args.window-rate-limiter.window=1m")))
			.hasMessageContaining("route 'orders'")
			.hasMessageContaining("appears on the route and among the default filters");
	}

	@Test
	void routesOfTheBuiltInLimiterAreLeftAlone() {
		try (ConfigurableApplicationContext context = start("rate-limiter=#{@redisRateLimiter}",
				"redis-rate-limiter.replenish-rate=10")) {
			assertThat(context.isActive()).isTrue();
		}
	}

	@Test
	void aGoodRouteStarts() {
		try (ConfigurableApplicationContext context = start("rate-limiter=#{@windowRateLimiter}",
				"window-rate-limiter.algorithm=sliding-log",
				"window-rate-limiter.limit=10", "window-rate-limiter.window=1m")) {
			assertThat(context.getBean(WindowRateLimiter.class)).isNotNull();
		}
	}

	@Test
	void aBadPlanStopsStartUpNamingPlanAndProperty() {
		assertThat(startUpFailure(List.of(ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.plan=free",
				"window-rate-limiter.plans.free.limits[0].limit=10",
				"window-rate-limiter.plans.free.limits[0].window=1s",
				"window-rate-limiter.plans.free.limits[0].algorithm=leaky-bucket")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on plan 'free': window-rate-limiter.plans.free.limits[0].algorithm is "
					+ "'leaky-bucket'; allowed: one of fixed-window, sliding-log, sliding-window-counter, token-bucket, concurrency");
	}

	/** Plan {@code free} as docs/llm-routes.md declares it: 60 requests a minute and 100,000 tokens a day. */
	private static final List<String> FREE_PLAN = List.of("window-rate-limiter.plans.free.limits[0].limit=60",
			"window-rate-limiter.plans.free.limits[0].window=1m", "window-rate-limiter.plans.free.limits[1].limit=100000",
			"window-rate-limiter.plans.free.limits[1].window=1d", "window-rate-limiter.plans.free.limits[1].unit=tokens");

	/** Route 'chat' (index 1): a WindowRateLimit filter metering OpenAI calls, its limits from plan free. */
	private static List<String> llmRouteOnPlanFree() {
		String chat = "spring.cloud.gateway.server.webflux.routes[1].";
		List<String> properties = new ArrayList<>(List.of(chat + "id=chat", chat + "uri=http://127.0.0.1:9",
				chat + "predicates[0]=Path=/chat/**", chat + "filters[0].name=WindowRateLimit",
				chat + "filters[0].args.key-resolver=#{@apiKeyResolver}", chat + "filters[0].args.llm=openai",
				chat + "filters[0].args.plan=free"));
		properties.addAll(FREE_PLAN);
		return properties;
	}

	/** Issue 44 (attack r2, 6): a plan's unit was dropped by the properties, so plan free had no token limit. */
	@Test
	void aPlansTokenLimitFromThePropertiesCountsTokensOnAnLlmRoute() {
		List<String> properties = llmRouteOnPlanFree();
		properties.add(ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}");
		properties.add(ROUTE + "filters[0].args.window-rate-limiter.plan=free");
		try (ConfigurableApplicationContext context = startWith(properties)) {
			io.windowlimiter.core.RateLimiterCore core = context.getBean(io.windowlimiter.core.RateLimiterCore.class);
			assertThat(core.plans().get("free")).extracting(io.windowlimiter.core.policy.RouteLimit::countsTokens)
				.containsExactly(false, true);
		}
	}

	/** A plan of token limits only on a route that meters no LLM calls would count requests as tokens. */
	@Test
	void aPlanOfTokenLimitsOnlyOnARouteWithoutLlmStopsStartUpNamingRouteAndPlan() {
		assertThat(startUpFailure(List.of(ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.plan=tokonly",
				"window-rate-limiter.plans.tokonly.limits[0].limit=3",
				"window-rate-limiter.plans.tokonly.limits[0].window=10m",
				"window-rate-limiter.plans.tokonly.limits[0].unit=tokens")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("route 'orders'")
			.hasMessageContaining("window-rate-limiter.plan is 'tokonly' and plan 'tokonly'")
			.hasMessageContaining("has only limits counting tokens, on a route that meters no LLM calls");
	}

	@Test
	void aPlansUnknownUnitStopsStartUpNamingPlanAndProperty() {
		List<String> properties = new ArrayList<>(List.of(ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.plan=free"));
		properties.addAll(FREE_PLAN);
		properties.add("window-rate-limiter.plans.free.limits[1].unit=token");
		assertThat(startUpFailure(properties)).isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on plan 'free': window-rate-limiter.plans.free.limits[1].unit is 'token'; "
					+ "allowed: " + io.windowlimiter.core.policy.RouteArgs.UNITS);
	}

	@Test
	void aScopeWithOtherLimitsOnTwoRoutesStopsStartUpNamingBoth() {
		String second = "spring.cloud.gateway.server.webflux.routes[1].";
		assertThat(startUpFailure(List.of(ROUTE + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				ROUTE + "filters[0].args.window-rate-limiter.scope=api",
				ROUTE + "filters[0].args.window-rate-limiter.limit=100",
				ROUTE + "filters[0].args.window-rate-limiter.window=1d", second + "id=search",
				second + "uri=http://127.0.0.1:9", second + "predicates[0]=Path=/search/**",
				second + "filters[0].name=RequestRateLimiter",
				second + "filters[0].args.rate-limiter=#{@windowRateLimiter}",
				second + "filters[0].args.key-resolver=#{@headerKeyResolver}",
				second + "filters[0].args.window-rate-limiter.scope=api",
				second + "filters[0].args.window-rate-limiter.limit=200",
				second + "filters[0].args.window-rate-limiter.window=1d")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("Invalid rate limit on route 'search': window-rate-limiter.scope 'api' is "
					+ "['api' 200 per 1d sliding-window-counter] here but ['api' 100 per 1d sliding-window-counter] "
					+ "on route 'orders'");
	}

}
