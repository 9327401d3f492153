package io.windowlimiter.app.it;

import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.gateway.test.FakeLlmServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestClassOrder;

/**
 * The tests of the packaged jar that need two instances started together (as a deployment's instances start) and
 * an operator's endpoint: one pair of jars, started once, serves them all (a pair takes 15-20 s to start on this
 * machine). First, before any other request reaches them, one client races across both fresh instances
 * ({@link FreshPairCases}); then the {@code ratelimits} endpoint ({@link RateLimitsEndpointCases}) and an
 * operator's overrides on an LLM route ({@link LlmOverridesCases}). Each case class has its own routes and client
 * keys, so none sees another's counts; the arguments are the union of what each needs.
 */
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
class OperatorPairIT {

	private static JarPair pair;

	private static FakeLlmServer llm;

	@BeforeAll
	static void start() {
		llm = FakeLlmServer.start();
		List<String> args = new ArrayList<>(RateLimitsEndpointCases.args());
		args.addAll(LlmOverridesCases.ARGS.stream().filter((arg) -> !args.contains(arg)).toList());
		pair = JarPair.start("ops", routes -> {
			FreshPairCases.routes(routes);
			RateLimitsEndpointCases.routes(routes);
			LlmOverridesCases.routes(routes, llm);
		}, args);
	}

	@AfterAll
	static void stop() throws Exception {
		Resources.close(pair, llm);
	}

	/** First: the instances are fresh only until their first requests. */
	@Nested
	@Order(1)
	class FreshPair extends FreshPairCases {

		FreshPair() {
			super(pair);
		}

	}

	@Nested
	@Order(2)
	class Endpoint extends RateLimitsEndpointCases {

		Endpoint() {
			super(pair);
		}

	}

	@Nested
	@Order(3)
	class LlmOverrides extends LlmOverridesCases {

		LlmOverrides() {
			super(pair);
		}

	}

}
