package io.windowlimiter.core.key;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

class ClientIpRuleLogUnitTests {

	@Test
	void saysWhoFollowsForwardedHeaders() {
		assertThat(ClientIpRuleLog.forwardedHandling(new MockEnvironment())).as("nothing set, no platform").isNull();
		assertThat(ClientIpRuleLog.forwardedHandling(new MockEnvironment().withProperty(ClientIpRuleLog.STRATEGY,
				"NATIVE"))).startsWith("server.forward-headers-strategy is native");
		assertThat(ClientIpRuleLog.forwardedHandling(new MockEnvironment().withProperty(ClientIpRuleLog.STRATEGY,
				"framework"))).startsWith("server.forward-headers-strategy is framework");
		assertThat(ClientIpRuleLog.forwardedHandling(new MockEnvironment().withProperty(ClientIpRuleLog.STRATEGY,
				"none"))).isNull();
		assertThat(ClientIpRuleLog.forwardedHandling(new MockEnvironment()
			.withProperty(ClientIpRuleLog.GATEWAY_CUSTOMIZER, "true")
			.withProperty(ClientIpRuleLog.GATEWAY_TRUSTED_PROXIES, "10\\.0\\..*")))
			.startsWith(ClientIpRuleLog.GATEWAY_CUSTOMIZER + " is true");
		// the gateway applies its customizer only with trusted proxies
		assertThat(ClientIpRuleLog.forwardedHandling(new MockEnvironment()
			.withProperty(ClientIpRuleLog.GATEWAY_CUSTOMIZER, "true"))).isNull();
	}

	@Test
	void aDetectedPlatformCountsOnlyWhileTheStrategyIsUnset() {
		// as detected (the jar tests start it with a pod's environment variables, which Boot reads)
		MockEnvironment kubernetes = new MockEnvironment().withProperty("spring.main.cloud-platform", "kubernetes");
		assertThat(ClientIpRuleLog.forwardedHandling(kubernetes)).contains("cloud platform KUBERNETES");
		assertThat(ClientIpRuleLog.forwardedHandling(kubernetes.withProperty(ClientIpRuleLog.STRATEGY, "none"))).isNull();
	}

	@Test
	void namesTheTrustedProxiesOrSaysThereAreNone() {
		assertThat(ClientIpRuleLog.message("x", List.of())).contains("clientIpKeyResolver keys clients by the TCP peer")
			.contains("(empty, so X-Forwarded-For is never read)");
		assertThat(ClientIpRuleLog.message("x", List.of(IpRange.of("10.0.0.0/8"), IpRange.of("::1"))))
			.contains("(now 10.0.0.0/8, ::1/128)");
	}

}
