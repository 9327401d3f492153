package io.windowlimiter.gateway.filter;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.SlotRelease;
import io.windowlimiter.gateway.StartupRouteCheck;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.RouteDefinition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Where {@code algorithm: concurrency} may be used, checked at start-up as the gateway's route properties give
 * it: on the WindowRateLimit filter (which releases each slot when its response ends), never on a
 * RequestRateLimiter route (which cannot see that end), nor with block-for, calendar, max-delay or tokens.
 */
class ConcurrencyStartupTests {

	private static final String ALLOWED = "algorithm concurrency only on the WindowRateLimit filter (WebFlux), which "
			+ "gives each slot back when the response ends; this route's filter (Spring Cloud Gateway's "
			+ "RequestRateLimiter, or the Server MVC filter) cannot see that end, so slots would stay taken for their whole window";

	private static Throwable check(String filterName, Map<String, String> args, Map<String, Map<String, String>> plans) {
		RouteDefinition route = new RouteDefinition();
		route.setId("chat");
		route.setUri(URI.create("http://127.0.0.1:9"));
		FilterDefinition filter = new FilterDefinition();
		filter.setName(filterName);
		filter.getArgs().putAll(args);
		route.setFilters(List.of(filter));
		GatewayProperties gateway = new GatewayProperties();
		gateway.setRoutes(List.of(route));
		return catchThrowable(
				() -> new StartupRouteCheck(gateway, new PolicyRegistry(plans), false, null).afterSingletonsInstantiated());
	}

	private static Throwable filter(Map<String, String> args) {
		return check("WindowRateLimit", args, Map.of());
	}

	@Test
	void theFilterTakesAConcurrencyLimitAloneOrBesideRates() {
		assertThat(filter(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm", "concurrency", "limit", "2",
				"window", "30s"))).isNull();
		assertThat(filter(Map.of("key-resolver", "#{@headerKeyResolver}", "llm", "openai", "limits[0].limit", "60",
				"limits[0].window", "1m", "limits[1].limit", "100000", "limits[1].window", "1m", "limits[1].unit", "tokens",
				"limits[2].algorithm", "concurrency", "limits[2].limit", "4", "limits[2].window", "10m"))).isNull();
	}

	@Test
	void aRequestRateLimiterRouteIsRefusedNamingTheProperty() {
		assertThat(check("RequestRateLimiter", Map.of("rate-limiter", "#{@windowRateLimiter}", "key-resolver",
				"#{@headerKeyResolver}", "window-rate-limiter.algorithm", "concurrency", "window-rate-limiter.limit", "2",
				"window-rate-limiter.window", "30s"), Map.of()))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'chat': window-rate-limiter.algorithm is 'concurrency'; allowed: "
					+ ALLOWED);
		assertThat(check("RequestRateLimiter", Map.of("rate-limiter", "#{@windowRateLimiter}", "key-resolver",
				"#{@headerKeyResolver}", "window-rate-limiter.limits[0].limit", "10", "window-rate-limiter.limits[0].window",
				"1m", "window-rate-limiter.limits[1].algorithm", "concurrency", "window-rate-limiter.limits[1].limit", "2",
				"window-rate-limiter.limits[1].window", "30s"), Map.of()))
			.hasMessage("Invalid rate limit on route 'chat': window-rate-limiter.limits[1].algorithm is 'concurrency'; "
					+ "allowed: " + ALLOWED);
	}

	@Test
	void aRequestRateLimiterRouteOnPlansIsRefusedWhenAPlanCountsConcurrency() {
		Map<String, Map<String, String>> plans = Map.of("pro", Map.of("limits[0].algorithm", "concurrency",
				"limits[0].limit", "4", "limits[0].window", "1m"));
		assertThat(check("RequestRateLimiter", Map.of("rate-limiter", "#{@windowRateLimiter}", "key-resolver",
				"#{@headerKeyResolver}", "window-rate-limiter.plan", "pro"), plans))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'chat': window-rate-limiter.plan is 'pro' and plan 'pro' "
					+ "(which this route's clients may be on) has limit 'pro-0' of algorithm concurrency");
		// the same plan on the filter, which releases slots
		assertThat(check("WindowRateLimit", Map.of("key-resolver", "#{@headerKeyResolver}", "plan", "pro"), plans))
			.isNull();
	}

	@Test
	void settingsThatMeanNothingForSlotsInFlightAreRefused() {
		assertThat(filter(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm", "concurrency", "limit", "2",
				"window", "30s", "block-for", "10m")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'chat': block-for is '10m' on a limit of algorithm "
					+ "'concurrency'; allowed: no block-for with concurrency");
		assertThat(filter(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm", "concurrency", "limit", "2",
				"calendar", "day")))
			.hasMessageStartingWith("Invalid rate limit on route 'chat': calendar is set on a limit of algorithm "
					+ "'concurrency'");
		assertThat(filter(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm", "concurrency", "limit", "2")))
			.hasMessageStartingWith("Invalid rate limit on route 'chat': window is missing");
		assertThat(filter(Map.of("key-resolver", "#{@headerKeyResolver}", "algorithm", "concurrency", "limit", "0",
				"window", "30s")))
			.hasMessageStartingWith("Invalid rate limit on route 'chat': limit is '0'; allowed: a whole number from 1");
		assertThat(check("RequestRateLimiter", Map.of("rate-limiter", "#{@windowRateLimiter}", "key-resolver",
				"#{@headerKeyResolver}", "window-rate-limiter.algorithm", "concurrency", "window-rate-limiter.limit", "2",
				"window-rate-limiter.window", "30s", "window-rate-limiter.max-delay", "2s"), Map.of()))
			.hasMessageContaining("max-delay is '2s' with limit 'chat' counted by concurrency");
		assertThat(filter(Map.of("key-resolver", "#{@headerKeyResolver}", "llm", "openai", "limits[0].limit", "1000",
				"limits[0].window", "1m", "limits[0].unit", "tokens", "limits[1].algorithm", "concurrency", "limits[1].limit",
				"4", "limits[1].window", "10m", "limits[1].unit", "tokens")))
			.hasMessage("Invalid rate limit on route 'chat': limits[1].unit is 'tokens' on a limit of algorithm "
					+ "concurrency; allowed: unit: requests (the default) there: a concurrency limit counts requests in "
					+ "flight, one slot each");
	}

	/**
	 * A WindowRateLimit filter releases slots (ordered before the gateway writes the response, so a slot is
	 * given back once the whole response is written) where its limits count concurrency or it meters an LLM:
	 * there an override counting concurrency is taken; on a filter that does neither it is refused.
	 */
	@Test
	void theFilterReleasesSlotsWhereItCountsConcurrencyOrMetersAnLlmAndOnlyThereTakesSuchAnOverride() {
		RateLimiterCore core = RateLimiterCore.of(new LimitScript(RedisTestServer.get().template()),
				new RedisGuard(Duration.ofMillis(600), Duration.ofMillis(400), Duration.ofSeconds(10)),
				new DenyCache(1000, System::nanoTime), new LocalWindowLimiter(1000),
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), RateLimitMetrics.NONE, Clock.systemUTC());
		WindowRateLimitGatewayFilterFactory factory = new WindowRateLimitGatewayFilterFactory(core, null, false);
		KeyResolver key = exchange -> Mono.just("k");
		GatewayFilter plain = factory.apply("plain", c -> c.setKeyResolver(key).setLimit("10").setWindow("1m"));
		GatewayFilter counting = factory.apply("counting",
				c -> c.setKeyResolver(key).setAlgorithm("concurrency").setLimit("2").setWindow("30s"));
		GatewayFilter llm = factory.apply("llm",
				c -> c.setKeyResolver(key).setLlm("openai").setLimit("1000").setWindow("1m").setUnit("tokens"));
		assertThat(plain).isNotInstanceOf(OrderedGatewayFilter.class);
		for (GatewayFilter releasing : List.of(counting, llm)) {
			assertThat(releasing).isInstanceOf(OrderedGatewayFilter.class);
			assertThat(((OrderedGatewayFilter) releasing).getOrder())
				.isEqualTo(NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1);
		}
		var limits = PolicyRegistry.overrideLimits("plain",
				List.of(Map.of("algorithm", "concurrency", "limit", "3", "window", "1m")));
		assertThat(catchThrowable(() -> core.checkOverride("plain", limits)))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("limits[0].algorithm is 'concurrency' on route 'plain'");
		assertThatNoException().isThrownBy(() -> core.checkOverride("counting", limits));
		assertThatNoException().isThrownBy(() -> core.checkOverride("llm", limits));
	}

	@Test
	void anOverrideCountingConcurrencyIsRefusedOnARouteThatCannotReleaseIt() {
		PolicyRegistry registry = new PolicyRegistry(Map.of());
		registry.put("spi", Map.of("window-rate-limiter.limit", "10", "window-rate-limiter.window", "1m"));
		registry.put("filter", Map.of("window-rate-limiter.limit", "10", "window-rate-limiter.window", "1m"),
				SlotRelease.ALWAYS);
		var limits = PolicyRegistry.overrideLimits("spi",
				List.of(Map.of("algorithm", "concurrency", "limit", "3", "window", "1m")));
		assertThat(catchThrowable(() -> registry.checkOverrideReleased("spi", "spi", limits)))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on override for 'spi': limits[0].algorithm is 'concurrency' on route 'spi'");
		assertThatNoException().isThrownBy(() -> registry.checkOverrideReleased("filter", "filter", limits));
		// one written before this check (or by hand) falls back to the route's own limits
		assertThat(registry.override("spi", registry.route("spi"), limits)).isNull();
		assertThat(registry.override("filter", registry.route("filter"), limits)).isNotNull();
	}

}
