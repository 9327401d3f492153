package io.windowlimiter.gateway.key;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import io.windowlimiter.core.key.IpRange;

class ClientIpKeyResolverUnitTests {

	/** The load balancers of these tests: 10.0.0.0/8 and 2001:db8:ffff::/48. */
	private static final List<IpRange> PROXIES = List.of(IpRange.of("10.0.0.0/8"), IpRange.of("2001:db8:ffff::/48"));

	private static final int NO_CAP = Integer.MAX_VALUE;

	private static MockServerWebExchange request(String peer, String... forwardedFor) {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/")
			.remoteAddress(new InetSocketAddress(peer, 40_000));
		for (String header : forwardedFor) {
			request.header("X-Forwarded-For", header);
		}
		return MockServerWebExchange.from(request);
	}

	private static String key(ClientIpKeyResolver resolver, String peer, String... forwardedFor) {
		return resolver.resolve(request(peer, forwardedFor)).block();
	}

	private static String key(String peer, String... forwardedFor) {
		return key(new ClientIpKeyResolver(PROXIES, NO_CAP, 64), peer, forwardedFor);
	}

	@Test
	void byDefaultNothingIsTrustedAndTheHeaderIsIgnored() {
		ClientIpKeyResolver resolver = new ClientIpKeyResolver(List.of(), NO_CAP, 64);
		assertThat(key(resolver, "10.0.0.9")).isEqualTo("10.0.0.9");
		assertThat(key(resolver, "10.0.0.9", "6.6.6.6")).isEqualTo("10.0.0.9");
	}

	@Test
	void aSpoofedHeaderFromAnUntrustedPeerIsIgnored() {
		// the client reaches the gateway directly and makes up a new X-Forwarded-For each time
		for (int i = 0; i < 8; i++) {
			assertThat(key("203.0.113.7", "198.51.100." + i)).isEqualTo("203.0.113.7");
			assertThat(key("203.0.113.7", "10.0.0.1")).isEqualTo("203.0.113.7");
		}
	}

	@Test
	void behindATrustedProxyTheEntryItAppendedIsUsedAndSpoofedOnesAreNot() {
		// the client sent "X-Forwarded-For: 6.6.6.6"; the proxy at 10.0.0.9 appended the address it saw
		assertThat(key("10.0.0.9", "6.6.6.6, 203.0.113.7")).isEqualTo("203.0.113.7");
		assertThat(key("10.0.0.9", "203.0.113.7")).isEqualTo("203.0.113.7");
	}

	@Test
	void aChainOfTrustedProxiesIsWalkedFromTheRightToTheFirstUntrustedAddress() {
		assertThat(key("10.0.0.9", "6.6.6.6, 203.0.113.7, 10.1.1.1, 10.2.2.2")).isEqualTo("203.0.113.7");
		// several headers are one list, in order
		assertThat(key("10.0.0.9", "6.6.6.6", "203.0.113.7, 10.1.1.1", "10.2.2.2")).isEqualTo("203.0.113.7");
	}

	@Test
	void whenEveryEntryIsTrustedTheLeftmostIsTheClient() {
		assertThat(key("10.0.0.9", "10.3.3.3, 10.1.1.1")).isEqualTo("10.3.3.3");
	}

	@Test
	void aTrustedPeerWithoutTheHeaderIsItselfTheClient() {
		assertThat(key("10.0.0.9")).isEqualTo("10.0.0.9");
	}

	@Test
	void trustedProxiesAreMatchedByRangeInIpv4AndIpv6() {
		List<IpRange> proxies = List.of(IpRange.of("192.168.4.0/22"), IpRange.of("172.16.0.7"),
				IpRange.of("2001:db8:ffff::/48"), IpRange.of("fd00::1"));
		ClientIpKeyResolver resolver = new ClientIpKeyResolver(proxies, NO_CAP, 128);
		assertThat(key(resolver, "192.168.7.255", "203.0.113.7")).isEqualTo("203.0.113.7");
		assertThat(key(resolver, "192.168.8.0", "203.0.113.7")).isEqualTo("192.168.8.0");
		assertThat(key(resolver, "172.16.0.7", "203.0.113.7")).isEqualTo("203.0.113.7");
		assertThat(key(resolver, "172.16.0.8", "203.0.113.7")).isEqualTo("172.16.0.8");
		assertThat(key(resolver, "2001:db8:ffff:1234::1", "2001:db8:1::7")).isEqualTo("2001:db8:1::7");
		assertThat(key(resolver, "2001:db8:fffe::1", "2001:db8:1::7")).isEqualTo("2001:db8:fffe::1");
		// any text form of a trusted address is trusted
		assertThat(key(resolver, "fd00:0:0:0:0:0:0:1", "203.0.113.7")).isEqualTo("203.0.113.7");
		// an IPv4 proxy seen over an IPv6 socket is still that proxy
		assertThat(key(resolver, "172.16.0.7", "6.6.6.6, 203.0.113.7, ::ffff:172.16.0.7")).isEqualTo("203.0.113.7");
	}

	@Test
	void anEntryThatIsNotAnIpLiteralStopsTheWalkAtTheLastTrustedAddress() {
		for (String garbage : new String[] { "unknown", "example.com", "localhost", "_hidden", "1.2.3", "256.1.1.1",
				"1.2.3.4:http", "[2001:db8::1", "2001:db8::1]", "\u0661.2.3.4" }) {
			assertThat(key("10.0.0.9", "203.0.113.7, " + garbage)).as(garbage).isEqualTo("10.0.0.9");
			assertThat(key("10.0.0.9", "203.0.113.7, " + garbage + ", 10.1.1.1")).as(garbage).isEqualTo("10.1.1.1");
		}
	}

	@Test
	void portsAndBracketsSomeProxiesWriteAreUnderstood() {
		assertThat(key("10.0.0.9", "203.0.113.7:51234")).isEqualTo("203.0.113.7");
		assertThat(key("10.0.0.9", "[2001:db8:1:2::7]:443")).isEqualTo("2001:db8:1:2::/64");
		assertThat(key("10.0.0.9", "[2001:db8:1:2::7]")).isEqualTo("2001:db8:1:2::/64");
	}

	@Test
	void theHopCapStopsTheWalkHoweverManyEntriesAreTrusted() {
		ClientIpKeyResolver oneHop = new ClientIpKeyResolver(PROXIES, 1, 64);
		assertThat(key(oneHop, "10.0.0.9", "203.0.113.7, 10.1.1.1")).isEqualTo("10.1.1.1");
		assertThat(key(oneHop, "10.0.0.9", "6.6.6.6, 203.0.113.7")).isEqualTo("203.0.113.7");
		ClientIpKeyResolver noHops = new ClientIpKeyResolver(PROXIES, 0, 64);
		assertThat(key(noHops, "10.0.0.9", "203.0.113.7")).isEqualTo("10.0.0.9");
	}

	@Test
	void ipv6ClientsAreKeyedByTheirSlash64() {
		// one host holds a whole /64: every address in it is one client
		assertThat(key("2001:db8:1:2::1")).isEqualTo("2001:db8:1:2::/64");
		assertThat(key("2001:db8:1:2:ffff:ffff:ffff:ffff")).isEqualTo("2001:db8:1:2::/64");
		assertThat(key("10.0.0.9", "2001:db8:1:2:a:b:c:d")).isEqualTo("2001:db8:1:2::/64");
		// the next /64 is another client
		assertThat(key("2001:db8:1:3::1")).isEqualTo("2001:db8:1:3::/64");
	}

	@Test
	void theIpv6PrefixLengthIsConfigurable() {
		assertThat(key(new ClientIpKeyResolver(List.of(), NO_CAP, 48), "2001:db8:1:2::1")).isEqualTo("2001:db8:1::/48");
		assertThat(key(new ClientIpKeyResolver(List.of(), NO_CAP, 56), "2001:db8:1:2ff::1"))
			.isEqualTo("2001:db8:1:200::/56");
		assertThat(key(new ClientIpKeyResolver(List.of(), NO_CAP, 128), "2001:db8:1:2::1")).isEqualTo("2001:db8:1:2::1");
		assertThat(key(new ClientIpKeyResolver(List.of(), NO_CAP, 0), "2001:db8:1:2::1")).isEqualTo("::/0");
		// IPv4 is always keyed by the full address
		assertThat(key(new ClientIpKeyResolver(List.of(), NO_CAP, 0), "203.0.113.7")).isEqualTo("203.0.113.7");
	}

	@Test
	void textFormsOfOneAddressAreOneKey() {
		assertThat(key("10.0.0.9", "2001:0db8:0001:0002:0000:0000:0000:0001")).isEqualTo("2001:db8:1:2::/64");
		ClientIpKeyResolver perAddress = new ClientIpKeyResolver(PROXIES, NO_CAP, 128);
		assertThat(Arrays.asList(key(perAddress, "10.0.0.9", "2001:db8::1"),
				key(perAddress, "10.0.0.9", "2001:0db8:0:0::1"), key(perAddress, "10.0.0.9", "2001:DB8::0:1"),
				key(perAddress, "2001:db8:0:0:0:0:0:1")))
			.containsOnly("2001:db8::1");
	}

	@Test
	void ipv4MappedAddressesAreKeyedAsIpv4() {
		assertThat(key("10.0.0.9", "::ffff:203.0.113.7")).isEqualTo("203.0.113.7");
		assertThat(key("10.0.0.9", "::FFFF:cb00:7107")).isEqualTo("203.0.113.7");
		assertThat(key("::ffff:203.0.113.7")).isEqualTo("203.0.113.7");
	}

	@Test
	void badSettingsAreRefused() {
		assertThatThrownBy(() -> new ClientIpKeyResolver(PROXIES, -1, 64)).hasMessageContaining("0 or more");
		assertThatThrownBy(() -> new ClientIpKeyResolver(PROXIES, NO_CAP, 129)).hasMessageContaining("0 .. 128");
		assertThatThrownBy(() -> new ClientIpKeyResolver(PROXIES, NO_CAP, -1)).hasMessageContaining("0 .. 128");
	}

}
