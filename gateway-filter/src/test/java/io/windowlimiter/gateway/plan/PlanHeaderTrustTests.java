package io.windowlimiter.gateway.plan;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.Downstream;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A client sends {@code X-Plan: pro} itself, in every setup the README documents: the plan header is read
 * only once trust in it is stated, and then as the route's filters before {@code RequestRateLimiter} left
 * the request, so {@code RemoveRequestHeader} in the route's filters or the default filters keeps the
 * client on its default plan.
 */
class PlanHeaderTrustTests {

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	private static final String FREE = "\"per-route\";q=3;w=3600";

	private static final String PRO = "\"per-route\";q=6;w=3600";

	/** One per test: closing a gateway disposes Reactor Netty's shared resources, a server's on them too. */
	private final Downstream downstream = Downstream.start();

	private final WebClient client = WebClient.create();

	@AfterEach
	void stop() {
		this.downstream.close();
	}

	/** Plans free (3 an hour) and pro (6), the plan header X-Plan, and whatever else is given. */
	private static List<String> properties(String... more) {
		RedisTestServer redis = RedisTestServer.get();
		List<String> properties = new ArrayList<>(List.of("server.port=0", "spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port(), "window-rate-limiter.plan-header=X-Plan"));
		for (String plan : List.of("free=3", "pro=6")) {
			String[] pair = plan.split("=");
			String limit = "window-rate-limiter.plans." + pair[0] + ".limits[0].";
			properties.addAll(List.of(limit + "name=per-route", limit + "limit=" + pair[1], limit + "window=1h"));
		}
		properties.addAll(List.of(more));
		return properties;
	}

	/** Route {@code id}: the given filters (shortcut form), with RequestRateLimiter at {@code limiterAt}. */
	private List<String> route(int index, String id, int limiterAt, String... filters) {
		String route = ROUTES + "[" + index + "].";
		List<String> properties = new ArrayList<>(List.of(route + "id=" + id, route + "uri=" + this.downstream.uri(),
				route + "predicates[0]=Path=/" + id + "/**"));
		List<String> all = new ArrayList<>(List.of(filters));
		all.add(limiterAt, null);
		for (int i = 0; i < all.size(); i++) {
			String filter = route + "filters[" + i + "].";
			if (all.get(i) == null) {
				properties.addAll(List.of(filter + "name=RequestRateLimiter",
						filter + "args.rate-limiter=#{@windowRateLimiter}",
						filter + "args.key-resolver=#{@headerKeyResolver}", filter + "args.window-rate-limiter.plan=free"));
			}
			else {
				properties.add(ROUTES + "[" + index + "].filters[" + i + "]=" + all.get(i));
			}
		}
		return properties;
	}

	private static ConfigurableApplicationContext start(List<String> properties) {
		return new SpringApplicationBuilder(GatewayTestApplication.class).properties(properties.toArray(String[]::new))
			.run();
	}

	/** The RateLimit-Policy a fresh client gets on the route when it sends X-Plan: pro itself. */
	private String policyForAClientClaimingPro(ConfigurableApplicationContext context, String route) {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		return this.client.get()
			.uri("http://127.0.0.1:" + port + "/" + route + "/items")
			.header("X-API-Key", "client-" + UUID.randomUUID())
			.header("X-Plan", "pro")
			.exchangeToMono(response -> response.bodyToMono(String.class).defaultIfEmpty("").map(body -> {
				assertThat(response.statusCode().value()).as(body).isEqualTo(200);
				return response.headers().asHttpHeaders();
			}))
			.map(headers -> headers.getFirst("RateLimit-Policy"))
			.block(Duration.ofSeconds(10));
	}

	@Test
	void aPlanHeaderWhoseTrustIsNotStatedStopsStartUp() {
		List<String> properties = properties();
		properties.addAll(route(0, "orders", 0));
		properties.addAll(List.of(GatewayTestApplication.QUIET_REFUSAL));
		Throwable thrown = catchThrowable(() -> start(properties).close());
		assertThat(thrown).as("start-up must fail").isNotNull();
		assertThat(NestedExceptionUtils.getMostSpecificCause(thrown).getMessage())
			.contains("window-rate-limiter.plan-header is 'X-Plan'")
			.contains("any client can send")
			.contains("RemoveRequestHeader=X-Plan")
			.contains("window-rate-limiter.plan-header-trusted: true");
	}

	@Test
	void theRouteFiltersBeforeTheLimiterDecideWhatItReads() {
		List<String> properties = properties("window-rate-limiter.plan-header-trusted=true");
		properties.addAll(route(0, "open", 0));
		properties.addAll(route(1, "stripped", 1, "RemoveRequestHeader=X-Plan"));
		properties.addAll(route(2, "stripped-after", 0, "RemoveRequestHeader=X-Plan"));
		properties.addAll(route(3, "vouched", 2, "RemoveRequestHeader=X-Plan", "SetRequestHeader=X-Plan, pro"));
		try (ConfigurableApplicationContext context = start(properties)) {
			// trusted and not removed: the client's header is read, as stated (a proxy in front overwrites it)
			assertThat(policyForAClientClaimingPro(context, "open")).isEqualTo(PRO);
			// removed by the route before the limiter: the client stays on the route's default plan
			assertThat(policyForAClientClaimingPro(context, "stripped")).isEqualTo(FREE);
			// removed after the limiter: too late, as the README says
			assertThat(policyForAClientClaimingPro(context, "stripped-after")).isEqualTo(PRO);
			// what a route filter before the limiter writes is what the limiter reads
			assertThat(policyForAClientClaimingPro(context, "vouched")).isEqualTo(PRO);
		}
	}

	@Test
	void aDefaultFilterRemovingTheHeaderKeepsTheClientOnItsDefaultPlan() {
		List<String> properties = properties("window-rate-limiter.plan-header-trusted=true",
				"spring.cloud.gateway.server.webflux.default-filters[0]=RemoveRequestHeader=X-Plan");
		properties.addAll(route(0, "orders", 0));
		try (ConfigurableApplicationContext context = start(properties)) {
			assertThat(policyForAClientClaimingPro(context, "orders")).isEqualTo(FREE);
		}
	}

}
