package io.windowlimiter.mvc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import io.windowlimiter.core.Admission;
import io.windowlimiter.core.CountStatuses;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.mvc.key.HeaderMvcKeyResolver;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The start-up check of WindowRateLimit routes in properties: every mistake names the route and the exact
 * property; and the request thread's bounded wait for a decision.
 */
class MvcRouteCheckTests {

	private static final String ROUTE = "spring.cloud.gateway.server.webmvc.routes[0].";

	private final RateLimiterCore core = RateLimiterCore.of(new LimitScript(RedisTestServer.get().template()),
			new RedisGuard(Duration.ofMillis(300), Duration.ofMillis(200), Duration.ofSeconds(10)),
			new DenyCache(1000, System::nanoTime), new LocalWindowLimiter(1000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), RateLimitMetrics.NONE, Clock.systemUTC());

	private final DefaultListableBeanFactory beans = new DefaultListableBeanFactory();

	MvcRouteCheckTests() {
		this.beans.registerSingleton("headerKeyResolver", new HeaderMvcKeyResolver("X-API-Key"));
	}

	@Test
	void configuresTheCoreWithTheRoutesLimits() {
		MvcRouteCheck check = check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s");
		assertThat(check.routes()).containsExactly("r");
		assertThat(this.core.route("r").policy.limits().get(0).policy().limit()).isEqualTo(5);
	}

	@Test
	void namesTheRouteAndPropertyOfABadLimit() {
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "0", "window", "10s"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("route 'r'")
			.hasMessageContaining(ROUTE + "filters[0].args.limit is '0'");
	}

	@Test
	void refusesAConcurrencyLimitWhichServerMvcCannotRelease() {
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "algorithm", "concurrency", "limit", "2",
				"window", "30s"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining(ROUTE + "filters[0].args.algorithm is 'concurrency'; allowed: algorithm concurrency "
					+ "only on the WindowRateLimit filter (WebFlux)");
	}

	@Test
	void leasesOnExactLimitsAndRefusesThemBesideACostTheResponseSettles() {
		check("key-resolver", "headerKeyResolver", "algorithm", "token-bucket", "limit", "5", "window", "1s", "lease",
				"50ms");
		assertThat(this.core.route("r").byDefault.leases).isTrue();
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "algorithm", "fixed-window", "limit", "5",
				"window", "10s", "lease", "50ms", "cost-from-response-header", "X-Cost"))
			.hasMessageContaining(ROUTE + "filters[0].args.lease is '50ms' beside cost-from-response-header; allowed: "
					+ "either lease or a cost the response settles");
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s", "lease", "50ms"))
			.hasMessageContaining("lease is '50ms' with limit")
			.hasMessageContaining("counted by sliding-window-counter");
	}

	@Test
	void refusesAnArgumentTheFilterDoesNotHave() {
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "windw", "10s"))
			.hasMessageContaining(ROUTE + "filters[0].args.windw is no argument of WindowRateLimit");
	}

	@Test
	void refusesAMissingOrUnknownKeyResolver() {
		assertThatThrownBy(() -> check("limit", "5", "window", "10s"))
			.hasMessageContaining(ROUTE + "filters[0].args.key-resolver is missing")
			.hasMessageContaining("headerKeyResolver");
		assertThatThrownBy(() -> check("key-resolver", "ipKeyResolver", "limit", "5", "window", "10s"))
			.hasMessageContaining(ROUTE + "filters[0].args.key-resolver is 'ipKeyResolver'");
	}

	@Test
	void readsAWebFluxStyleKeyResolverAsTheBeanItNames() {
		check("key-resolver", "#{@headerKeyResolver}", "limit", "5", "window", "10s");
	}

	@Test
	void takesResponseDependentArgumentsAndNamesABadOne() {
		check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s", "count-statuses", "401, 4xx",
				"cost-from-response-header", "X-Actual-Cost");
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s",
				"count-statuses", "401,4x"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("route 'r'")
			.hasMessageContaining(ROUTE + "filters[0].args.count-statuses is '401,4x', with '4x'")
			.hasMessageContaining("allowed: " + CountStatuses.ALLOWED);
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s",
				"cost-from-response-header", "X Cost"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining(ROUTE + "filters[0].args.cost-from-response-header is 'X Cost'")
			.hasMessageContaining("allowed: the name of an HTTP header");
	}

	@Test
	void takesTheRefusalStatusesAndNamesABadOne() {
		check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s", "status-code", "503",
				"empty-key-status", "401");
		check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s", "statusCode", "418",
				"emptyKeyStatus", "599");
		for (String bad : new String[] { "200", "600", "4o3", "" }) {
			assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s",
					"status-code", bad))
				.isInstanceOf(InvalidRouteConfigurationException.class)
				.hasMessageContaining("route 'r'")
				.hasMessageContaining(ROUTE + "filters[0].args.status-code is '" + bad + "'")
				.hasMessageContaining("allowed: an HTTP status code from 400 to 599");
		}
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s",
				"empty-key-status", "399"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining(ROUTE + "filters[0].args.empty-key-status is '399'")
			.hasMessageContaining("allowed: an HTTP status code from 400 to 599");
	}

	/** As WebFlux's FilterSettings: deny-empty-key is true or false, anything else stops start-up naming it. */
	@Test
	void takesDenyEmptyKeyAndNamesABadOne() {
		check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s", "deny-empty-key", "false");
		check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s", "denyEmptyKey", "true");
		for (String written : new String[] { "deny-empty-key", "denyEmptyKey" }) {
			assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s", written,
					"maybe"))
				.isInstanceOf(InvalidRouteConfigurationException.class)
				.hasMessageContaining("route 'r'")
				.hasMessageContaining(ROUTE + "filters[0].args.deny-empty-key is 'maybe'")
				.hasMessageContaining("allowed: true or false");
		}
	}

	@Test
	void namesABadRefusalStatusOfAJavaDslRoute() {
		assertThatThrownBy(() -> WindowRateLimitFilterFunctions.windowRateLimit(c -> c.setKeyResolver("headerKeyResolver")
			.setLimit("5")
			.setWindow("10s")
			.setStatusCode("299")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("status-code is '299'");
		assertThatThrownBy(() -> WindowRateLimitFilterFunctions.windowRateLimit(c -> c.setKeyResolver("headerKeyResolver")
			.setLimit("5")
			.setWindow("10s")
			.setEmptyKeyStatus("x")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("empty-key-status is 'x'");
	}

	/** Built in the Java DSL: checked where the filter is made, named as the DSL's route. */
	@Test
	void namesABadCountStatusesOfAJavaDslRoute() {
		assertThatThrownBy(() -> WindowRateLimitFilterFunctions.windowRateLimit(c -> c.setKeyResolver("headerKeyResolver")
			.setLimit("5")
			.setWindow("10s")
			.setCountStatuses("600")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("count-statuses is '600', with '600'");
	}

	/** What the core decides for any adapter: a calendar quota, a penalty, lists, as on WebFlux. */
	@Test
	void takesTheCalendarPenaltyAndListArguments() {
		check("key-resolver", "headerKeyResolver", "limit", "1", "calendar", "week", "time-zone",
				"Pacific/Kiritimati", "week-start", "sunday", "quota-status", "403", "unit", "requests");
		assertThat(this.core.route("r").policy.quotaStatus()).isEqualTo(403);
		check("key-resolver", "headerKeyResolver", "limit", "1", "window", "1s", "block-for", "10m", "allow", "vip",
				"deny", "banned");
		assertThat(this.core.route("r").lists.deny().matches("banned")).isTrue();
	}

	@Test
	void namesTheRouteThePropertyAndTheAllowedValuesOfABadCalendarArgument() {
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "1", "calendar", "fortnight"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("route 'r'")
			.hasMessageContaining(ROUTE + "filters[0].args.calendar is 'fortnight'")
			.hasMessageContaining("day, week, month");
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "1", "window", "1m",
				"quota-status", "403"))
			.hasMessageContaining(ROUTE + "filters[0].args.quota-status is '403' on a route without a calendar quota");
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "1", "window", "1m", "unit",
				"tokens"))
			.hasMessageContaining(ROUTE + "filters[0].args.unit is 'tokens'")
			.hasMessageContaining("requests");
	}

	/** An LLM route: a request limit and a token limit, the units read here and never given to the core. */
	@Test
	void takesAnLlmRouteWithATokenLimit() {
		check("key-resolver", "headerKeyResolver", "llm", "openai", "max-body-bytes", "65536", "limits[0].limit", "60",
				"limits[0].window", "1m", "limits[1].limit", "100000", "limits[1].window", "1m", "limits[1].unit",
				"tokens");
		assertThat(this.core.route("r").policy.limits()).hasSize(2);
		check("key-resolver", "headerKeyResolver", "llm", "anthropic", "limit", "5000", "window", "1h", "unit", "tokens");
		assertThat(this.core.route("r").policy.limits().get(0).policy().limit()).isEqualTo(5000);
	}

	/** What the WebFlux filter refuses beside llm, refused here with the whole property path. */
	@Test
	void refusesTheLlmArgumentsTheWebFluxFilterRefusesNamingTheirPath() {
		String[] tokens = { "key-resolver", "headerKeyResolver", "limit", "1000", "window", "1m", "unit", "tokens" };
		assertThatThrownBy(() -> check(tokens))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining(ROUTE + "filters[0].args.unit is 'tokens' on a filter without llm");
		assertThatThrownBy(() -> check(plus(tokens, "llm", "gemini")))
			.hasMessageContaining(ROUTE + "filters[0].args.llm is 'gemini'; allowed: openai");
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "llm", "openai", "limit", "5", "window",
				"1m"))
			.hasMessageContaining(ROUTE + "filters[0].args.llm is set but no limit counts tokens");
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "window", "1m",
				"max-body-bytes", "4096"))
			.hasMessageContaining(ROUTE + "filters[0].args.max-body-bytes is set without llm");
		assertThatThrownBy(() -> check(plus(tokens, "llm", "openai", "max-body-bytes", "12")))
			.hasMessageContaining(ROUTE + "filters[0].args.max-body-bytes is '12'");
		assertThatThrownBy(() -> check(plus(tokens, "llm", "openai", "count-statuses", "4xx")))
			.hasMessageContaining(ROUTE + "filters[0].args.count-statuses is set beside llm");
		assertThatThrownBy(() -> check(plus(tokens, "llm", "openai", "cost-from-header", "X-Cost")))
			.hasMessageContaining(ROUTE + "filters[0].args.cost-from-header is set beside llm");
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "llm", "openai", "limits.0.limit", "5",
				"limits.0.window", "1m", "limits.0.unit", "words"))
			.hasMessageContaining(ROUTE + "filters[0].args.limits[0].unit is 'words'");
	}

	/** In the Java DSL the filter fails where it is built, with the same messages. */
	@Test
	void refusesBadLlmArgumentsWhereAJavaDslFilterIsBuilt() {
		assertThatThrownBy(() -> WindowRateLimitFilterFunctions.windowRateLimit(c -> c
			.setKeyResolver("headerKeyResolver")
			.setLlm("openai")
			.setLimit("100")
			.setWindow("1m")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining("llm is set but no limit counts tokens");
		assertThat(WindowRateLimitFilterFunctions.windowRateLimit(c -> c.setKeyResolver("headerKeyResolver")
			.setLlm("anthropic")
			.setLimit("1000")
			.setWindow("1m")
			.setUnit("tokens"))).isNotNull();
	}

	private static String[] plus(String[] base, String... more) {
		String[] all = new String[base.length + more.length];
		System.arraycopy(base, 0, all, 0, base.length);
		System.arraycopy(more, 0, all, base.length, more.length);
		return all;
	}

	/** Holding a request would park a servlet thread for the delay: refused, and the message says so. */
	@Test
	void refusesMaxDelaySayingWhy() {
		assertThatThrownBy(() -> check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s",
				"max-delay", "2s"))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessageContaining(ROUTE + "filters[0].args.max-delay is not available on Server MVC")
			.hasMessageContaining("servlet thread");
	}

	@Test
	void refusesASecondWindowRateLimitOnOneRoute() {
		MockEnvironment environment = environment("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s");
		environment.setProperty(ROUTE + "filters[1].name", "WindowRateLimit");
		environment.setProperty(ROUTE + "filters[1].args.key-resolver", "headerKeyResolver");
		assertThatThrownBy(() -> new MvcRouteCheck(environment, this.core, this.beans))
			.hasMessageContaining(ROUTE + "filters[1] is a second WindowRateLimit");
	}

	/**
	 * A decision the core does not end (a guard that failed to) holds the request thread no longer than the
	 * bound: the route's fail-mode answers then, open passing and closed refusing.
	 */
	@Test
	void aRequestThreadWaitsForADecisionAtMostTheBound() throws Exception {
		check("key-resolver", "headerKeyResolver", "limit", "5", "window", "10s", "fail-mode", "closed");
		MvcRateLimiter limiter = new MvcRateLimiter(this.core, null, this.beans, Duration.ofMillis(300), false);
		AtomicBoolean cancelled = new AtomicBoolean();
		long started = System.nanoTime();
		Admission admission = limiter.await("r", Mono.<Admission>never().doOnCancel(() -> cancelled.set(true)));
		long tookMillis = (System.nanoTime() - started) / 1_000_000;
		assertThat(tookMillis).isBetween(500L, 1_000L);
		assertThat(cancelled).as("the decision given up is cancelled (its Redis call dropped)").isTrue();
		assertThat(admission.passes()).isFalse();
		assertThat(admission.headers()).containsEntry("Retry-After", "1");
		assertThat(limiter.waitsGivenUp()).isEqualTo(1);
		assertThat(limiter.await("r", Mono.just(new Admission(true, Map.of(), List.of()))).passes()).isTrue();
	}

	/** A settle that never ends (a stalled Redis the guard did not end in time) holds the thread no longer. */
	@Test
	void givesUpASettleAfterTheBound() {
		MvcRateLimiter limiter = new MvcRateLimiter(this.core, null, this.beans, Duration.ofMillis(300), false);
		long started = System.nanoTime();
		limiter.awaitSettle("r", Mono.never());
		long tookMillis = (System.nanoTime() - started) / 1_000_000;
		assertThat(tookMillis).isBetween(500L, 1_000L);
		assertThat(limiter.settlesGivenUp()).isEqualTo(1);
		limiter.awaitSettle("r", Mono.just("settled"));
		assertThat(limiter.settlesGivenUp()).isEqualTo(1);
	}

	private MvcRouteCheck check(String... args) {
		return new MvcRouteCheck(environment(args), this.core, this.beans);
	}

	private static MockEnvironment environment(String... args) {
		MockEnvironment environment = new MockEnvironment();
		environment.setProperty(ROUTE + "id", "r");
		environment.setProperty(ROUTE + "uri", "http://127.0.0.1:1");
		environment.setProperty(ROUTE + "predicates[0]", "Path=/r/**");
		environment.setProperty(ROUTE + "filters[0].name", "WindowRateLimit");
		for (int i = 0; i < args.length; i += 2) {
			environment.setProperty(ROUTE + "filters[0].args." + args[i], args[i + 1]);
		}
		return environment;
	}

}
