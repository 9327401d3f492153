package io.windowlimiter.mvc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.mvc.key.ApiKeyMvcKeyResolver;
import io.windowlimiter.mvc.key.HeaderMvcKeyResolver;
import io.windowlimiter.mvc.key.MvcKeyResolver;
import io.windowlimiter.mvc.key.PrincipalMvcKeyResolver;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The start-up refusals docs/server-mvc.md quotes are the ones a Server MVC gateway prints: the block marked
 * {@code <!-- docs-test: startup-messages -->} there is, character for character, Boot's "APPLICATION FAILED TO
 * START" report of the three mistakes below, as the library's failure analyzer words them (loaded as Boot loads
 * it, from {@code spring.factories}) for the route check's refusals with the key resolvers the auto-configuration
 * declares.
 */
class MvcStartupMessagesDocsTests {

	private static final String ROUTE = "spring.cloud.gateway.server.webmvc.routes[0].";

	private static final Pattern BLOCK = Pattern
		.compile("(?s)<!-- docs-test: startup-messages -->\\s*\\n```text\\n(.*?)```");

	private final RateLimiterCore core = RateLimiterCore.of(new LimitScript(RedisTestServer.get().template()),
			new RedisGuard(Duration.ofMillis(300), Duration.ofMillis(200), Duration.ofSeconds(10)),
			new DenyCache(1000, System::nanoTime), new LocalWindowLimiter(1000),
			new RateLimitHeaders(RateLimitHeaders.Names.defaults()), RateLimitMetrics.NONE, Clock.systemUTC());

	private final DefaultListableBeanFactory beans = new DefaultListableBeanFactory();

	MvcStartupMessagesDocsTests() {
		// the auto-configuration's resolvers, by the names it gives them
		this.beans.registerSingleton("headerKeyResolver", new HeaderMvcKeyResolver("X-API-Key"));
		this.beans.registerSingleton("apiKeyResolver", new ApiKeyMvcKeyResolver());
		this.beans.registerSingleton("clientIpKeyResolver", (MvcKeyResolver) request -> "127.0.0.1");
		this.beans.registerSingleton("principalKeyResolver", new PrincipalMvcKeyResolver());
	}

	@Test
	void theStartUpMessagesTheDocsQuoteAreTheOnesPrinted() throws IOException {
		String printed = List
			.of(report("limit", "0", "window", "1m"), report("limit", "100", "windw", "1m"),
					report("limit", "100", "window", "1m", "key-resolver", "ipKeyResolver"))
			.stream()
			.collect(Collectors.joining("\n"));
		Matcher block = BLOCK.matcher(Files.readString(Path.of("../docs/server-mvc.md")));
		assertThat(block.find()).as("docs/server-mvc.md has a block marked docs-test: startup-messages").isTrue();
		assertThat(block.group(1)).isEqualTo(printed);
	}

	/** Boot's report of the failure to start a route with these arguments. */
	private String report(String... args) {
		MockEnvironment environment = new MockEnvironment();
		environment.setProperty(ROUTE + "id", "orders");
		environment.setProperty(ROUTE + "uri", "http://orders:8080");
		environment.setProperty(ROUTE + "predicates[0]", "Path=/orders/**");
		environment.setProperty(ROUTE + "filters[0].name", "WindowRateLimit");
		if (List.of(args).indexOf("key-resolver") < 0) {
			environment.setProperty(ROUTE + "filters[0].args.key-resolver", "headerKeyResolver");
		}
		for (int i = 0; i < args.length; i += 2) {
			environment.setProperty(ROUTE + "filters[0].args." + args[i], args[i + 1]);
		}
		Throwable failure = catchThrowable(() -> new MvcRouteCheck(environment, this.core, this.beans));
		assertThat(failure).as("the route with %s is refused", List.of(args)).isNotNull();
		FailureAnalysis analysis = SpringFactoriesLoader.forDefaultResourceLocation()
			// those that need Boot's context to be built are not the library's: skipped
			.load(FailureAnalyzer.class, SpringFactoriesLoader.FailureHandler.handleMessage((message, ex) -> {
			}))
			.stream()
			.map(analyzer -> analyzer.analyze(failure))
			.filter(Objects::nonNull)
			.findFirst()
			.orElseThrow(() -> new AssertionError("no failure analyzer took " + failure, failure));
		// as Boot's LoggingFailureAnalysisReporter prints it
		return "***************************\nAPPLICATION FAILED TO START\n***************************\n\nDescription:\n\n"
				+ analysis.getDescription() + "\n\nAction:\n\n" + analysis.getAction() + "\n";
	}

}
