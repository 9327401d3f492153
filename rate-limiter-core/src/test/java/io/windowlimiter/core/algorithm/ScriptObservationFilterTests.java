package io.windowlimiter.core.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.tracing.LettuceObservationContext;
import io.lettuce.core.tracing.MicrometerTracing;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.windowlimiter.core.key.RedisKeys;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lettuce's command observations, as Spring Boot sets them up, on a real Redis: the limiter's scripts are left out
 * of them, the application's own commands are observed as before.
 */
class ScriptObservationFilterTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final RedisTestServer redis = RedisTestServer.get();

	@ParameterizedTest(name = "filter registered: {0}")
	@ValueSource(booleans = { true, false })
	void theLimitersScriptsAreLeftOutOfLettucesCommandObservations(boolean filtered) {
		List<String> observed = new CopyOnWriteArrayList<>();
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStart(Observation.Context context) {
				if (context instanceof LettuceObservationContext lettuce) {
					observed.add(lettuce.getRequiredCommand().getType().toString());
				}
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
		if (filtered) {
			registry.observationConfig().observationPredicate(new ScriptObservationFilter());
		}
		ClientResources resources = ClientResources.builder().tracing(new MicrometerTracing(registry, "redis")).build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()),
				LettuceClientConfiguration.builder().clientResources(resources).build());
		try {
			factory.afterPropertiesSet();
			factory.start();
			ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(factory);
			LimitScript script = new LimitScript(template);
			WindowPolicy policy = new WindowPolicy(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
			Verdict verdict = script
				.decide(List.of(RedisKeys.of("observed", "client-" + filtered, policy.algorithm().keySuffix())),
						LimitScript.arguments(List.of(policy), 1, ""))
				.block(TIMEOUT);
			template.opsForValue().get("an-application-key").blockOptional(TIMEOUT);

			assertThat(verdict.allowed()).isTrue();
			assertThat(observed).as("commands observed").contains("GET");
			if (filtered) {
				assertThat(observed).as("commands observed").doesNotContain("EVALSHA", "EVAL");
			}
			else {
				// the control: without the filter Lettuce observes the script as any other command
				assertThat(observed).as("commands observed").contains("EVALSHA");
			}
		}
		finally {
			factory.destroy();
			resources.shutdown();
		}
	}

}
