package io.windowlimiter.gateway.filter;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.gateway.StartupRouteCheck;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The LLM arguments of WindowRateLimit at start-up (the check run on the route properties, as start-up runs
 * it): a bad one stops start-up naming route, argument and what is allowed; a good one passes.
 */
class LlmStartupTests {

	private static Throwable check(String... pairs) {
		return check(Map.of(), pairs);
	}

	/** As start-up checks a WindowRateLimit filter with these arguments, with these plans declared. */
	private static Throwable check(Map<String, Map<String, String>> plans, String... pairs) {
		RouteDefinition route = new RouteDefinition();
		route.setId("chat");
		route.setUri(URI.create("http://127.0.0.1:9"));
		FilterDefinition filter = new FilterDefinition();
		filter.setName("WindowRateLimit");
		Map<String, String> args = new LinkedHashMap<>();
		args.put("key-resolver", "#{@headerKeyResolver}");
		for (String pair : pairs) {
			String[] split = pair.split("=", 2);
			args.put(split[0], split[1]);
		}
		filter.setArgs(args);
		route.setFilters(List.of(filter));
		GatewayProperties gateway = new GatewayProperties();
		gateway.setRoutes(List.of(route));
		return catchThrowable(
				() -> new StartupRouteCheck(gateway, new PolicyRegistry(plans), false, null).afterSingletonsInstantiated());
	}

	private static final String[] TWO_LIMITS = { "limits[0].limit=60", "limits[0].window=1m", "limits[1].limit=100000",
			"limits[1].window=1m", "limits[1].unit=tokens" };

	private static String[] plus(String[] base, String... more) {
		String[] all = new String[base.length + more.length];
		System.arraycopy(base, 0, all, 0, base.length);
		System.arraycopy(more, 0, all, base.length, more.length);
		return all;
	}

	/**
	 * The sorted-set log keeps one entry per unit: a call of a million tokens would be a million entries. Its
	 * token limits are refused, naming the property and the ring instead; its request limits may stay.
	 */
	@Test
	void aSortedSetLogCountingTokensIsNamed() {
		assertThat(check(plus(TWO_LIMITS, "llm=openai", "algorithm=sliding-log", "limits[1].log-storage=sorted-set")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'chat': limits[1].log-storage is 'sorted-set' on a "
					+ "limit counting tokens; allowed: the ring (the default log-storage: leave it out)");
		assertThat(check("llm=anthropic", "limit=5000", "window=1h", "unit=tokens", "algorithm=sliding-log",
				"log-storage=sorted-set")).hasMessageContaining("log-storage is 'sorted-set' on a limit counting tokens");
		assertThat(check(plus(TWO_LIMITS, "llm=openai", "algorithm=sliding-log", "limits[0].log-storage=sorted-set",
				"limits[1].limit=1000000"))).as("requests on the sorted set, tokens on the ring").isNull();
	}

	@Test
	void aTokenLimitOnAnLlmRoutePasses() {
		assertThat(check(plus(TWO_LIMITS, "llm=openai"))).isNull();
		assertThat(check("llm=anthropic", "limit=5000", "window=1h", "unit=tokens", "max-body-bytes=65536")).isNull();
	}

	@Test
	void tokensWithoutLlmAreNamed() {
		assertThat(check(TWO_LIMITS)).isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'chat': limits[1].unit is 'tokens' on a filter without "
					+ "llm; allowed: llm: openai or llm: anthropic");
	}

	@Test
	void badLlmArgumentsAreNamed() {
		assertThat(check(plus(TWO_LIMITS, "llm=gemini"))).hasMessageStartingWith(
				"Invalid rate limit on route 'chat': llm is 'gemini'; allowed: openai (chat completions and responses) "
						+ "or anthropic (messages)");
		assertThat(check("llm=openai", "limit=10", "window=1m")).hasMessageContaining("llm is set but no limit counts tokens");
		assertThat(check(plus(TWO_LIMITS, "llm=openai", "limits[0].unit=bytes")))
			.hasMessageContaining("limits[0].unit is 'bytes'; allowed: tokens");
		assertThat(check(plus(TWO_LIMITS, "llm=openai", "count-statuses=5xx")))
			.hasMessageContaining("count-statuses is set beside llm");
		assertThat(check(plus(TWO_LIMITS, "llm=openai", "max-body-bytes=12")))
			.hasMessageContaining("max-body-bytes is '12'; allowed: a whole number of bytes from 1024");
		assertThat(check("limit=10", "window=1m", "max-body-bytes=4096")).hasMessageContaining("max-body-bytes is set without llm");
	}

	/** A plan of a token and a request limit, and one of requests only, or of tokens only. */
	private static Map<String, Map<String, String>> plans(String other, String otherUnit) {
		return Map.of("free", Map.of("limits[0].limit", "60", "limits[0].window", "1m", "limits[1].limit", "100000",
				"limits[1].window", "1d", "limits[1].unit", "tokens"), other,
				Map.of("limits[0].limit", "1000", "limits[0].window", "1m", "limits[0].unit", otherUnit));
	}

	@Test
	void anLlmRouteMayUsePlansEachWithATokenLimit() {
		assertThat(check(plans("pro", "tokens"), "llm=openai", "plan=free")).isNull();
		assertThat(check(plans("pro", "requests"), "llm=openai", "plan=free"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("plan is 'free' and plan 'pro' (which this route's clients may be on) has no limit "
					+ "counting tokens, on a route that meters LLM calls (llm)");
	}

	@Test
	void aRouteWithoutLlmLeavesAPlansTokenLimitsOutAndRefusesAPlanOfTokensOnly() {
		assertThat(check(plans("pro", "requests"), "plan=free")).as("free's request limit counts here").isNull();
		assertThat(check(plans("pro", "tokens"), "plan=free"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("plan 'pro' (which this route's clients may be on) has only limits counting tokens, "
					+ "on a route that meters no LLM calls");
	}

	@Test
	void aTokenLimitOnTheRequestRateLimiterFilterIsRefused() {
		RouteDefinition route = new RouteDefinition();
		route.setId("spi");
		route.setUri(URI.create("http://127.0.0.1:9"));
		FilterDefinition filter = new FilterDefinition();
		filter.setName("RequestRateLimiter");
		filter.setArgs(Map.of("rate-limiter", "#{@windowRateLimiter}", "key-resolver", "#{@headerKeyResolver}",
				"window-rate-limiter.limit", "1000", "window-rate-limiter.window", "1m", "window-rate-limiter.unit",
				"tokens"));
		route.setFilters(List.of(filter));
		GatewayProperties gateway = new GatewayProperties();
		gateway.setRoutes(List.of(route));
		assertThat(catchThrowable(() -> new StartupRouteCheck(gateway, new PolicyRegistry(Map.of()), false, null)
			.afterSingletonsInstantiated())).isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageStartingWith("Invalid rate limit on route 'spi': window-rate-limiter.unit is 'tokens' on a route "
					+ "that meters no LLM calls; allowed: llm: openai or llm: anthropic on a WindowRateLimit filter");
	}

}
