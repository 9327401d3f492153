package io.windowlimiter.gateway.autoconfigure;

import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import java.net.InetSocketAddress;

import io.windowlimiter.gateway.key.ClientIpKeyResolver;
import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code clientIpKeyResolver} bean built from {@code window-rate-limiter.*}, and bad settings refused at start-up. */
class ClientIpConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisReactiveAutoConfiguration.class, WindowRateLimiterCoreAutoConfiguration.class,
				WindowRateLimiterAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + RedisTestServer.get().host(),
				"spring.data.redis.port=" + RedisTestServer.get().port());

	private static String key(ClientIpKeyResolver resolver, String peer, String forwardedFor) {
		return resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest.get("/")
			.remoteAddress(new InetSocketAddress(peer, 40_000))
			.header("X-Forwarded-For", forwardedFor))).block();
	}

	private String startUpFailure(String... properties) {
		String[] message = new String[1];
		this.runner.withPropertyValues(properties).run(context -> {
			assertThat(context).as("start-up must fail").hasFailed();
			message[0] = NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()).getMessage();
		});
		return message[0];
	}

	@Test
	void byDefaultNoProxyIsTrustedAndIpv6IsKeyedPerSlash64() {
		this.runner.run(context -> {
			ClientIpKeyResolver resolver = context.getBean("clientIpKeyResolver", ClientIpKeyResolver.class);
			assertThat(key(resolver, "127.0.0.1", "203.0.113.7")).isEqualTo("127.0.0.1");
			assertThat(key(resolver, "2001:db8:1:2::1", "203.0.113.7")).isEqualTo("2001:db8:1:2::/64");
		});
	}

	@Test
	void trustedProxiesHopsAndPrefixLengthAreBound() {
		this.runner
			.withPropertyValues("window-rate-limiter.trusted-proxies=10.0.0.0/8, 2001:db8:ffff::/48",
					"window-rate-limiter.trusted-proxy-hops=2", "window-rate-limiter.ipv6-prefix-length=56")
			.run(context -> {
				ClientIpKeyResolver resolver = context.getBean("clientIpKeyResolver", ClientIpKeyResolver.class);
				assertThat(key(resolver, "10.0.0.9", "6.6.6.6, 2001:db8:1:2ff::1")).isEqualTo("2001:db8:1:200::/56");
				assertThat(key(resolver, "2001:db8:ffff::9", "6.6.6.6, 203.0.113.7")).isEqualTo("203.0.113.7");
				// the cap: two entries read, both trusted, so the second is the client
				assertThat(key(resolver, "10.0.0.9", "203.0.113.7, 10.1.1.1, 10.2.2.2")).isEqualTo("10.1.1.1");
				assertThat(key(resolver, "203.0.113.9", "6.6.6.6")).isEqualTo("203.0.113.9");
			});
	}

	@Test
	void hopsWithoutTrustedProxiesStopStartUpAndSayWhatToSet() {
		// the old meaning of trusted-proxy-hops: believe X-Forwarded-For from any peer
		assertThat(startUpFailure("window-rate-limiter.trusted-proxy-hops=1"))
			.contains("window-rate-limiter.trusted-proxy-hops is 1 but window-rate-limiter.trusted-proxies is empty")
			.contains("list your proxies' addresses or CIDR ranges in window-rate-limiter.trusted-proxies");
	}

	@Test
	void zeroHopsWithoutTrustedProxiesIsTheDefaultBehaviour() {
		this.runner.withPropertyValues("window-rate-limiter.trusted-proxy-hops=0")
			.run(context -> assertThat(context).hasNotFailed());
	}

	@Test
	void aTrustedProxyThatIsNotAnAddressOrRangeStopsStartUp() {
		assertThat(startUpFailure("window-rate-limiter.trusted-proxies=10.0.0.0/8,proxy.internal"))
			.isEqualTo("'proxy.internal' is not an IP address or CIDR range; write one like 10.0.0.5, 10.0.0.0/8 or "
					+ "2001:db8::/32");
	}

	@Test
	void anIpv6PrefixLengthOutsideZeroTo128StopsStartUp() {
		assertThat(startUpFailure("window-rate-limiter.ipv6-prefix-length=129")).contains("ipv6PrefixLength")
			.contains("129")
			.contains("must be less than or equal to 128");
		assertThat(startUpFailure("window-rate-limiter.ipv6-prefix-length=-1")).contains("ipv6PrefixLength")
			.contains("must be greater than or equal to 0");
	}

	@Test
	void negativeHopsStopStartUp() {
		assertThat(startUpFailure("window-rate-limiter.trusted-proxies=10.0.0.0/8",
				"window-rate-limiter.trusted-proxy-hops=-1"))
			.contains("trustedProxyHops")
			.contains("must be greater than or equal to 0");
	}

	/**
	 * Not a client IP setting, but refused here as they are: a settle the guard has not given up may be sent again
	 * after a reconnect, and its marker in Redis lives a minute.
	 */
	@Test
	void aRedisTimeoutOverThirtySecondsStopsStartUp() {
		assertThat(startUpFailure("window-rate-limiter.redis-timeout=31s"))
			.contains("window-rate-limiter.redis-timeout is at most 30s, was PT31S");
		this.runner.withPropertyValues("window-rate-limiter.redis-timeout=30s")
			.run(context -> assertThat(context).hasNotFailed());
	}

}
