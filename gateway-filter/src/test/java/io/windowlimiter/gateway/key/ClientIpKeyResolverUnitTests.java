package io.windowlimiter.gateway.key;

import java.net.InetSocketAddress;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClientIpKeyResolverUnitTests {

	private static MockServerWebExchange request(String... forwardedFor) {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/")
			.remoteAddress(new InetSocketAddress("10.0.0.9", 40_000));
		for (String header : forwardedFor) {
			request.header("X-Forwarded-For", header);
		}
		return MockServerWebExchange.from(request);
	}

	private static String key(int trustedHops, String... forwardedFor) {
		return new ClientIpKeyResolver(trustedHops).resolve(request(forwardedFor)).block();
	}

	@Test
	void withoutTrustedProxiesTheHeaderIsIgnored() {
		assertThat(key(0)).isEqualTo("10.0.0.9");
		assertThat(key(0, "6.6.6.6")).isEqualTo("10.0.0.9");
	}

	@Test
	void behindOneProxyTheEntryItAppendedIsUsedAndSpoofedOnesAreNot() {
		// the client sent "X-Forwarded-For: 6.6.6.6"; the trusted proxy appended the address it saw
		assertThat(key(1, "6.6.6.6, 203.0.113.7")).isEqualTo("203.0.113.7");
		assertThat(key(1, "203.0.113.7")).isEqualTo("203.0.113.7");
	}

	@Test
	void behindTwoProxiesTheSecondEntryFromTheRightIsUsed() {
		assertThat(key(2, "6.6.6.6, 203.0.113.7, 192.168.1.1")).isEqualTo("203.0.113.7");
		assertThat(key(2, "6.6.6.6", "203.0.113.7, 192.168.1.1")).isEqualTo("203.0.113.7");
	}

	@Test
	void fewerEntriesThanTrustedHopsMeansTheProxiesWereBypassed() {
		assertThat(key(2, "6.6.6.6")).isEqualTo("10.0.0.9");
	}

	@Test
	void negativeHopsAreRefused() {
		assertThatThrownBy(() -> new ClientIpKeyResolver(-1)).hasMessageContaining("0 or more");
	}

}
