package io.windowlimiter.core.access;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteArgs;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Allow and deny lists as written (route args and entries) and as matched against client keys. */
class ClientListUnitTests {

	private static ClientList list(String... entries) {
		return ClientList.of(Arrays.asList(entries));
	}

	@Test
	void clientKeysMatchExactly() {
		ClientList list = list("partner-1", " monitor ");
		assertThat(list.matches("partner-1")).isTrue();
		assertThat(list.matches("monitor")).as("entries are trimmed").isTrue();
		assertThat(list.matches("partner-10")).isFalse();
		assertThat(list.matches("Partner-1")).isFalse();
		assertThat(list.matches("")).isFalse();
	}

	/** Keys as the clientIpKeyResolver makes them: IPv4 addresses and IPv6 /64 prefixes. */
	@Test
	void addressesAndRangesMatchTheClientIpResolversKeys() {
		ClientList list = list("203.0.113.7", "10.0.0.0/8", "2001:db8::/32", "2001:0db8:ffff:1::/64");
		assertThat(list.matches("203.0.113.7")).isTrue();
		assertThat(list.matches("203.0.113.8")).isFalse();
		assertThat(list.matches("10.255.1.2")).isTrue();
		assertThat(list.matches("11.0.0.1")).isFalse();
		assertThat(list.matches("2001:db8:1:2::/64")).as("a /64 inside a /32").isTrue();
		assertThat(list.matches("2001:db9:1:2::/64")).isFalse();
		assertThat(list.matches("2001:db8:ffff:1::/64")).as("a listed /64, written otherwise").isTrue();
		assertThat(list.matches("2001:db8::1")).as("an IPv6 address keyed whole (prefix length 128)").isTrue();
	}

	/** A single IPv6 address names one host; a /64 key names 2^64 of them, so it is not matched by it. */
	@Test
	void aListedIpv6AddressDoesNotMatchTheWiderPrefixKeyHoldingIt() {
		ClientList list = list("2001:db8:1:2::5", "2001:db8:7:0::/56");
		assertThat(list.matches("2001:db8:1:2::/64")).isFalse();
		assertThat(list.matches("2001:db8:1:2::5")).isTrue();
		assertThat(list.matches("2001:db8:7:3::/64")).isTrue();
		assertThat(list.matches("2001:db8:7::/48")).as("a wider prefix than the range").isFalse();
		assertThat(list.matches("2001:db8:7:3::/999")).isFalse();
	}

	@Test
	void anIpv4MappedAddressIsTheIpv4Client() {
		assertThat(list("::ffff:198.51.100.1").matches("198.51.100.1")).isTrue();
	}

	@Test
	void badEntriesAreRefusedNamingTheirPosition() {
		assertThatThrownBy(() -> list("a", "10.0.0.0/33")).hasMessageStartingWith(
				"entry 1 '10.0.0.0/33' is not a valid address or range: '10.0.0.0/33' has prefix length '33'; allowed: 0 .. 32");
		assertThatThrownBy(() -> list("300.1.2.3")).hasMessageStartingWith("entry 0 '300.1.2.3' is not a valid address");
		assertThatThrownBy(() -> list("2001:db8::/129")).hasMessageStartingWith("entry 0 '2001:db8::/129' is not a valid");
		assertThatThrownBy(() -> list("ok", " ")).hasMessage("entry 1 is empty");
		assertThatThrownBy(() -> list("two words")).hasMessage("entry 0 'two words' holds a space, comma or control character");
	}

	@Test
	void aRoutesListsAreReadFromCommaSeparatedTextOrAYamlList() {
		RouteLists lists = RouteArgs.parseLists("orders", Map.of("window-rate-limiter.limit", "5",
				"window-rate-limiter.allow", "monitor, 10.0.0.0/8", "window-rate-limiter.deny.0", "abuser",
				"window-rate-limiter.deny.1", "192.0.2.0/24"));
		assertThat(lists.allow().entries()).containsExactly("monitor", "10.0.0.0/8");
		assertThat(lists.deny().entries()).containsExactly("abuser", "192.0.2.0/24");
		assertThat(RouteArgs.parseLists("orders", Map.of("window-rate-limiter.limit", "5"))).isEqualTo(RouteLists.NONE);
	}

	@Test
	void aBadRouteEntryStopsTheRouteNamingRoutePropertyAndWhatIsAllowed() {
		PolicyRegistry registry = new PolicyRegistry(Map.of());
		assertThatThrownBy(() -> registry.put("orders", Map.of("window-rate-limiter.limit", "5",
				"window-rate-limiter.window", "1m", "window-rate-limiter.deny", "abuser,,x")))
			.isInstanceOf(InvalidRouteConfigurationException.class)
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.deny is 'abuser,,x': entry 1 is empty; allowed: "
					+ ClientList.ALLOWED + ", comma-separated");
		assertThatThrownBy(() -> registry.put("orders", Map.of("window-rate-limiter.limit", "5",
				"window-rate-limiter.window", "1m", "window-rate-limiter.allow", "10.1.0.0/40")))
			.hasMessageContaining("window-rate-limiter.allow is '10.1.0.0/40': entry 0 '10.1.0.0/40' is not a valid address "
					+ "or range");
		assertThatThrownBy(() -> registry.put("orders", Map.of("window-rate-limiter.limit", "5",
				"window-rate-limiter.window", "1m", "window-rate-limiter.allow", "a,b", "window-rate-limiter.deny", "b")))
			.hasMessage("Invalid rate limit on route 'orders': window-rate-limiter.deny names 'b', which "
					+ "window-rate-limiter.allow names too; allowed: each client in one list at most");
		assertThatThrownBy(() -> registry.put("orders", Map.of("window-rate-limiter.limit", "5",
				"window-rate-limiter.window", "1m", "window-rate-limiter.allowed", "a")))
			.hasMessageContaining("window-rate-limiter.allowed is not a known property")
			.hasMessageContaining("allow, deny, max-delay, lease, credential-keys (each prefixed window-rate-limiter.)");
	}

	@Test
	void aPlansLimitsTakeNoLists() {
		assertThatThrownBy(() -> new PolicyRegistry(Map.of("free", Map.of("limits[0].limit", "5", "limits[0].window",
				"1m", "allow", "x"))))
			.hasMessageContaining("window-rate-limiter.plans.free.allow is not a known property");
	}

	@Test
	void aRouteWhoseListsChangedIsNew() {
		PolicyRegistry registry = new PolicyRegistry(Map.of());
		Map<String, String> args = Map.of("window-rate-limiter.limit", "5", "window-rate-limiter.window", "1m");
		assertThat(registry.put("orders", args)).isTrue();
		assertThat(registry.put("orders", args)).isFalse();
		Map<String, String> listed = new java.util.HashMap<>(args);
		listed.put("window-rate-limiter.deny", "abuser");
		assertThat(registry.put("orders", listed)).isTrue();
		assertThat(registry.route("orders").lists.deny().matches("abuser")).isTrue();
		assertThat(List.of(registry.route("orders").lists.allow().isEmpty())).containsExactly(true);
	}

}
