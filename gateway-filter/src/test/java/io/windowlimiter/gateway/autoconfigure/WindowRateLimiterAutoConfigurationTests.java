package io.windowlimiter.gateway.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.ScriptObservationFilter;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/** What the library adds to a context, and how it stays out of the way of the gateway's and the user's beans. */
class WindowRateLimiterAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WindowRateLimiterCoreAutoConfiguration.class,
				WindowRateLimiterAutoConfiguration.class))
		.withBean(ReactiveStringRedisTemplate.class, () -> RedisTestServer.get().template());

	private static AbstractBeanDefinition definition(AssertableApplicationContext context, String name) {
		return (AbstractBeanDefinition) context.getBeanFactory().getBeanDefinition(name);
	}

	@Test
	void theLimiterAndTheKeyResolversAreReachedByNameOnly() {
		this.runner.run(context -> {
			for (String name : new String[] { WindowRateLimiter.BEAN_NAME, "headerKeyResolver", "clientIpKeyResolver" }) {
				assertThat(definition(context, name).isDefaultCandidate()).as(name).isFalse();
				assertThat(definition(context, name).isPrimary()).as(name).isFalse();
			}
			// the gateway's own default resolver is the gateway's to add
			assertThat(context).doesNotHaveBean("principalNameKeyResolver");
		});
	}

	@Test
	void optedInTheLimiterIsTheDefault() {
		this.runner.withPropertyValues("window-rate-limiter.default-limiter=true").run(context -> {
			assertThat(definition(context, WindowRateLimiter.BEAN_NAME).isDefaultCandidate()).isTrue();
			assertThat(definition(context, WindowRateLimiter.BEAN_NAME).isPrimary()).isTrue();
			assertThat(definition(context, "headerKeyResolver").isDefaultCandidate()).isFalse();
		});
	}

	@Test
	void internalBeansHavePrefixedNamesAndBackOffForTheUsersOwn() {
		this.runner.withBean("ownScript", LimitScript.class, () -> new LimitScript(RedisTestServer.get().template()))
			.run(context -> {
				assertThat(context).getBeans(LimitScript.class).containsOnlyKeys("ownScript");
				assertThat(context).hasBean("windowRateLimiterPolicyRegistry")
					.hasBean("windowRateLimiterDenyCache")
					.doesNotHaveBean("policyRegistry")
					.doesNotHaveBean("denyCache");
			});
	}

	@Test
	void lettucesObservationsLeaveTheScriptsOutUnlessAsked() {
		this.runner.run(context -> assertThat(context).hasSingleBean(ScriptObservationFilter.class));
		this.runner.withPropertyValues("window-rate-limiter.observe-scripts=true")
			.run(context -> assertThat(context).doesNotHaveBean(ScriptObservationFilter.class));
	}

}
