package io.windowlimiter.mvc.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterEndpointAutoConfiguration;
import io.windowlimiter.core.operations.RateLimitsEndpoint;
import io.windowlimiter.gateway.test.RedisTestServer;
import io.windowlimiter.mvc.operations.RateLimitsServletEndpointExtension;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/** The servlet extension of the ratelimits endpoint: only beside the endpoint, only on a servlet server. */
class WindowRateLimiterMvcEndpointAutoConfigurationTests {

	private static final String EXPOSE = "management.endpoints.web.exposure.include=" + RateLimitsEndpoint.ID;

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(
			WindowRateLimiterCoreAutoConfiguration.class, WindowRateLimiterEndpointAutoConfiguration.class,
			WindowRateLimiterMvcEndpointAutoConfiguration.class);

	@Test
	void onAServletServerTheExposedEndpointHasTheExtension() {
		redis(new WebApplicationContextRunner()).withPropertyValues(EXPOSE)
			.run(context -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
				.hasSingleBean(RateLimitsServletEndpointExtension.class));
	}

	@Test
	void noEndpointNoExtension() {
		redis(new WebApplicationContextRunner())
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitsServletEndpointExtension.class));
	}

	@Test
	void notOnAServerThatIsNoServletOne() {
		redis(new ApplicationContextRunner()).withPropertyValues(EXPOSE)
			.run(context -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
				.doesNotHaveBean(RateLimitsServletEndpointExtension.class));
	}

	private static <R extends AbstractApplicationContextRunner<R, ?, ?>> R redis(R runner) {
		return runner.withConfiguration(CONFIGURATIONS)
			.withBean(ReactiveStringRedisTemplate.class, () -> RedisTestServer.get().template());
	}

}
