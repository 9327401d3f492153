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
 * The feature tests of the packaged jar that need two instances but nothing of a jar to themselves
 * (lists and near-limit, calendar quotas and penalties, max-delay, concurrency, leases): one pair of jars, started once, the
 * way users run them, serves them all (a pair started at once takes about 15 s on an idle machine, over a minute on a
 * loaded one). Each feature's routes, client keys and gateway settings are its own, so no test sees
 * another's counts; the tests are in {@link ListsAndNearLimitCases}, {@link CalendarPenaltyCases},
 * {@link MaxDelayCases}, {@link ConcurrencyCases} and {@link LeaseCases} (whose routes lead to a downstream that holds its answers,
 * and to a fake LLM, both started here before the jars).
 */
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
class FeaturePairIT {

	private static JarPair pair;

	private static HeldJdkDownstream held;

	private static FakeLlmServer llm;

	@BeforeAll
	static void start() {
		held = HeldJdkDownstream.start();
		llm = FakeLlmServer.start();
		List<String> args = new ArrayList<>(List.of(
				"--management.endpoints.web.exposure.include=health,prometheus,ratelimits",
				"--window-rate-limiter.problem-details.enabled=true"));
		args.addAll(ListsAndNearLimitCases.ARGS);
		args.addAll(MaxDelayCases.ARGS);
		pair = JarPair.start("feature", routes -> {
			ListsAndNearLimitCases.routes(routes);
			CalendarPenaltyCases.routes(routes);
			MaxDelayCases.routes(routes);
			ConcurrencyCases.routes(routes, held, llm);
			LeaseCases.routes(routes);
		}, args);
	}

	@AfterAll
	static void stop() {
		if (pair != null) {
			pair.close();
		}
		if (held != null) {
			held.close();
		}
		if (llm != null) {
			llm.close();
		}
	}

	/** First: its near-limit line is logged at most once an hour per gateway, whoever comes near a limit. */
	@Nested
	@Order(1)
	class ListsAndNearLimit extends ListsAndNearLimitCases {

		ListsAndNearLimit() {
			super(pair);
		}

	}

	@Nested
	@Order(2)
	class CalendarPenalty extends CalendarPenaltyCases {

		CalendarPenalty() {
			super(pair);
		}

	}

	@Nested
	@Order(3)
	class MaxDelay extends MaxDelayCases {

		MaxDelay() {
			super(pair);
		}

	}

	@Nested
	@Order(4)
	class Concurrency extends ConcurrencyCases {

		Concurrency() {
			super(pair, held);
		}

	}

	@Nested
	@Order(5)
	class Lease extends LeaseCases {

		Lease() {
			super(pair);
		}

	}

}
