package io.windowlimiter.app.it;

import java.time.Duration;
import java.util.List;

import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Two gateway-app jars started together on one real {@code redis-server}: right after both are up, before any
 * other request, one client's requests race across both, and the limit holds across them exactly.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FreshPairCases {

	private static final int LIMIT = 10;

	private static final int REQUESTS = 60;

	private static final List<Limits.Route> ROUTES = Limits.everyAlgorithm("pair", LIMIT, "1m");

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private final List<GatewayJar> gateways;

	FreshPairCases(JarPair pair) {
		this.gateways = pair.both();
	}

	static void routes(RouteFile routes) {
		ROUTES.forEach(route -> routes.route(route.id(), route.args()));
	}

	/** {@value #REQUESTS} requests of one client, 32 at a time, half to each instance: exactly the limit passes. */
	@Test
	void exactLimitsAcrossTwoFreshInstances() {
		SoftAssertions softly = new SoftAssertions();
		for (Limits.Route route : ROUTES) {
			Limits.awaitRoomInWindow(Duration.ofMinutes(1), Duration.ofSeconds(5));
			Tally tally = Race.fire(this.gateways, route.path("x"), "racer-" + this.run, REQUESTS, 32,
					GatewayJarIT.UNANSWERED_AFTER);
			System.out.println("[race, two fresh instances] " + route.id() + ": " + tally);
			softly.assertThat(tally.answers()).as(route.id() + " answered, " + tally).isEqualTo(REQUESTS);
			softly.assertThat(tally.status(200)).as(route.id() + " allowed, " + tally).isEqualTo(LIMIT);
			softly.assertThat(tally.status(429)).as(route.id() + " denied, " + tally).isEqualTo(REQUESTS - LIMIT);
		}
		for (GatewayJar gateway : this.gateways) {
			softly.assertThat(gateway.failModeAnswers()).as("fail-mode answers of a healthy Redis, see " + gateway)
				.isZero();
		}
		softly.assertAll();
	}

}
