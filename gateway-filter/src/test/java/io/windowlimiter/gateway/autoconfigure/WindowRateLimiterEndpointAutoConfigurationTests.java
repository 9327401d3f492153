package io.windowlimiter.gateway.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterEndpointAutoConfiguration;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.core.operations.AssignmentRequest;
import io.windowlimiter.core.operations.ChangeBroadcast;
import io.windowlimiter.core.operations.DeniedClients;
import io.windowlimiter.core.operations.RateLimitOperations;
import io.windowlimiter.core.operations.RateLimitsEndpoint;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.audit.AuditEvent;
import org.springframework.boot.actuate.audit.AuditEventRepository;
import org.springframework.boot.actuate.audit.InMemoryAuditEventRepository;
import org.springframework.boot.actuate.audit.listener.AuditListener;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/** The operator endpoint is there only when actuator is and the user exposes it; the broadcast always. */
class WindowRateLimiterEndpointAutoConfigurationTests {

	private static final String EXPOSE = "management.endpoints.web.exposure.include=" + RateLimitsEndpoint.ID;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WindowRateLimiterCoreAutoConfiguration.class, WindowRateLimiterAutoConfiguration.class,
				WindowRateLimiterEndpointAutoConfiguration.class))
		.withBean(ReactiveStringRedisTemplate.class, () -> RedisTestServer.get().template());

	@Test
	void notExposedNoEndpointAndNoTrackingButTheBroadcastListens() {
		this.runner.run(context -> {
			assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class)
				.doesNotHaveBean(RateLimitOperations.class)
				.doesNotHaveBean(DeniedClients.class)
				.hasSingleBean(ChangeBroadcast.class);
			assertThat(context.getBean(ChangeBroadcast.class).isRunning()).isTrue();
		});
	}

	@Test
	void exposedTheEndpointIsThere() {
		this.runner.withPropertyValues(EXPOSE).run(context -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
			.hasSingleBean(RateLimitOperations.class)
			.hasSingleBean(DeniedClients.class));
	}

	@Test
	void withoutActuatorTheLimiterStillWorksAndListens() {
		this.runner.withPropertyValues(EXPOSE).withClassLoader(new FilteredClassLoader(Endpoint.class)).run(context -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitsEndpoint.class).hasSingleBean(ChangeBroadcast.class);
		});
	}

	/** On a route of plans the read follows the client's assignment, and a reset deletes its counts there. */
	@Test
	void readsAndResetsFollowTheClientsPlan() {
		this.runner.withPropertyValues(EXPOSE, "window-rate-limiter.plans.free.limits[0].limit=2",
				"window-rate-limiter.plans.free.limits[0].window=1h", "window-rate-limiter.plans.gold.limits[0].limit=50",
				"window-rate-limiter.plans.gold.limits[0].window=1h")
			.run(context -> {
				String route = "planned-" + UUID.randomUUID();
				WindowRateLimiter limiter = context.getBean(WindowRateLimiter.BEAN_NAME, WindowRateLimiter.class);
				limiter.register(route, Map.of("plan", "free"));
				RateLimitOperations operations = context.getBean(RateLimitOperations.class);
				RateLimitOperations.ClientStanding free = operations.standing(route, "bob").block(Duration.ofSeconds(5));
				assertThat(free.plan()).isEqualTo("free");
				assertThat(free.limits()).extracting(RateLimitOperations.LimitStanding::remaining).containsExactly(2L);

				context.getBean(PlanAssignments.class).assign(route, "bob", "gold", null).block(Duration.ofSeconds(5));
				limiter.isAllowed(route, "bob").block(Duration.ofSeconds(5));
				RateLimitOperations.ClientStanding gold = operations.standing(route, "bob").block(Duration.ofSeconds(5));
				assertThat(gold.plan()).isEqualTo("gold");
				assertThat(gold.limits()).extracting(RateLimitOperations.LimitStanding::remaining).containsExactly(49L);

				assertThat(operations.reset(route, "bob", null).block(Duration.ofSeconds(5)).deletedKeys()).isEqualTo(1);
				assertThat(operations.standing(route, "bob").block(Duration.ofSeconds(5)).limits())
					.extracting(RateLimitOperations.LimitStanding::remaining)
					.containsExactly(50L);
			});
	}

	/**
	 * A rolling upgrade left a sliding log's key of the previous layout, which the script reads when the client
	 * has none of this one: a reset deletes it too, or the next decision would read the counts back.
	 */
	@Test
	void aResetDeletesASlidingLogsKeyOfThePreviousLayoutToo() {
		this.runner.withPropertyValues(EXPOSE).run(context -> {
			String route = "upgraded-" + UUID.randomUUID();
			context.getBean(WindowRateLimiter.BEAN_NAME, WindowRateLimiter.class)
				.register(route, Map.of("algorithm", "sliding-log", "limit", 5, "window", "1m"));
			// five units logged a moment ago by the previous version: its header, then one double per unit
			String lua = "local t = struct.pack('>d', tonumber(ARGV[1])) "
					+ "return redis.call('SET', KEYS[1], struct.pack('>I4I4', 0, 5) .. string.rep(t, 5), 'PX', 60000)";
			RedisTestServer.get().template().execute(RedisScript.of(lua, String.class),
					List.of(RedisKeys.of(route, "dave", "ring")), List.of(Long.toString(System.currentTimeMillis() - 1_000)))
				.blockFirst(Duration.ofSeconds(5));
			RateLimitOperations operations = context.getBean(RateLimitOperations.class);
			assertThat(operations.standing(route, "dave").block(Duration.ofSeconds(5)).limits())
				.extracting(RateLimitOperations.LimitStanding::remaining).containsExactly(0L);
			assertThat(operations.reset(route, "dave", null).block(Duration.ofSeconds(5)).deletedKeys()).isEqualTo(2);
			assertThat(operations.standing(route, "dave").block(Duration.ofSeconds(5)).limits())
				.extracting(RateLimitOperations.LimitStanding::remaining).containsExactly(5L);
		});
	}

	@Test
	void aResetIsAnAuditEventWhereTheApplicationKeepsThem() {
		// what Boot's AuditAutoConfiguration adds beside a repository (it needs Spring Security here)
		InMemoryAuditEventRepository repository = new InMemoryAuditEventRepository();
		this.runner.withPropertyValues(EXPOSE)
			.withBean(AuditEventRepository.class, () -> repository)
			.withBean(AuditListener.class, () -> new AuditListener(repository))
			.run(context -> {
				String route = "audited-" + UUID.randomUUID();
				context.getBean(WindowRateLimiter.BEAN_NAME, WindowRateLimiter.class)
					.register(route, Map.of("limit", 5, "window", "1m"));
				context.getBean(RateLimitOperations.class).reset(route, "alice", "ops-user").block(Duration.ofSeconds(5));
				AuditEvent event = repository.find("ops-user", null, RateLimitOperations.RESET_EVENT)
					.get(0);
				assertThat(event.getData()).containsEntry("target", route).containsEntry("client", "alice");
			});
	}

	/** Assigning, overriding and clearing are audit events too, each of its own type, saying what changed. */
	@Test
	void assignmentsAreAuditEventsWhereTheApplicationKeepsThem() {
		InMemoryAuditEventRepository repository = new InMemoryAuditEventRepository();
		this.runner
			.withPropertyValues(EXPOSE, "window-rate-limiter.plans.free.limits[0].limit=2",
					"window-rate-limiter.plans.free.limits[0].window=1h",
					"window-rate-limiter.plans.gold.limits[0].limit=50",
					"window-rate-limiter.plans.gold.limits[0].window=1h")
			.withBean(AuditEventRepository.class, () -> repository)
			.withBean(AuditListener.class, () -> new AuditListener(repository))
			.run(context -> {
				String route = "assigned-" + UUID.randomUUID();
				context.getBean(WindowRateLimiter.BEAN_NAME, WindowRateLimiter.class).register(route, Map.of("plan", "free"));
				RateLimitOperations operations = context.getBean(RateLimitOperations.class);
				operations.change(route, "carol", AssignmentRequest.of(route, "gold", Map.of(), "1h", null), "ops-user").block(Duration.ofSeconds(5));
				operations.change(route, "carol", AssignmentRequest.of(route, null,
						Map.of("limit", "7", "window", "1m"), null, null), "ops-user").block(Duration.ofSeconds(5));
				operations.change(route, "carol", AssignmentRequest.of(route, null, Map.of(), null, "true"), "ops-user").block(Duration.ofSeconds(5));
				AuditEvent assigned = repository.find("ops-user", null, RateLimitOperations.ASSIGN_EVENT).get(0);
				assertThat(assigned.getData()).containsEntry("target", route)
					.containsEntry("client", "carol")
					.containsEntry("plan", "gold")
					.containsKey("expires");
				AuditEvent overridden = repository.find("ops-user", null, RateLimitOperations.OVERRIDE_EVENT).get(0);
				assertThat(overridden.getData()).containsEntry("limits", "'" + route + "-0' 7 per PT1M sliding-window-counter");
				assertThat(repository.find("ops-user", null, RateLimitOperations.CLEAR_EVENT)).hasSize(1);
				assertThat(context.getBean(PlanAssignments.class).find(route, "carol")).isNull();
			});
	}

}
