package io.windowlimiter.core.key;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class IpRangeUnitTests {

	private static boolean contains(String range, String address) {
		return IpRange.of(range).contains(IpAddresses.parseLiteral(address));
	}

	@Test
	void anIpv4RangeHoldsExactlyItsAddresses() {
		assertThat(contains("10.0.0.0/8", "10.255.255.255")).isTrue();
		assertThat(contains("10.0.0.0/8", "11.0.0.0")).isFalse();
		assertThat(contains("192.168.4.0/22", "192.168.7.1")).isTrue();
		assertThat(contains("192.168.4.0/22", "192.168.8.1")).isFalse();
		assertThat(contains("0.0.0.0/0", "203.0.113.7")).isTrue();
		assertThat(contains("0.0.0.0/0", "2001:db8::1")).as("another family").isFalse();
	}

	@Test
	void anIpv6RangeHoldsExactlyItsAddresses() {
		assertThat(contains("2001:db8::/32", "2001:db8:ffff::1")).isTrue();
		assertThat(contains("2001:db8::/32", "2001:db9::1")).isFalse();
		assertThat(contains("2001:db8:0:ff00::/56", "2001:db8:0:ffff::1")).isTrue();
		assertThat(contains("2001:db8:0:ff00::/56", "2001:db8:0:fe00::1")).isFalse();
		assertThat(contains("::/0", "203.0.113.7")).as("another family").isFalse();
	}

	@Test
	void aBareAddressIsARangeOfOne() {
		assertThat(contains("10.0.0.5", "10.0.0.5")).isTrue();
		assertThat(contains("10.0.0.5", "10.0.0.6")).isFalse();
		assertThat(contains("::1", "0:0:0:0:0:0:0:1")).isTrue();
		assertThat(IpRange.of("2001:0DB8:0:0::1").toString()).isEqualTo("2001:db8::1/128");
	}

	@Test
	void ipv4MappedAddressesMatchIpv4Ranges() {
		assertThat(contains("10.0.0.0/8", "::ffff:10.1.2.3")).isTrue();
		assertThat(contains("::ffff:10.1.2.3", "10.1.2.3")).isTrue();
	}

	@Test
	void bitsPastThePrefixAreIgnored() {
		assertThat(IpRange.of("10.1.2.3/8").toString()).isEqualTo("10.0.0.0/8");
		assertThat(contains("10.1.2.3/8", "10.200.0.1")).isTrue();
	}

	@Test
	void anythingButAnAddressOrRangeIsRefusedAndNeverLookedUp() {
		for (String bad : new String[] { "localhost", "proxy.internal", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1",
				"10.0.0.0/8/8", "2001:db8::/129", "10.0.0.0/x", "::ffff:10.0.0.0/104", "", "*" }) {
			assertThatIllegalArgumentException().as(bad).isThrownBy(() -> IpRange.of(bad)).withMessageContaining(bad);
		}
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.of("localhost"))
			.withMessage("'localhost' is not an IP address or CIDR range; write one like 10.0.0.5, 10.0.0.0/8 or "
					+ "2001:db8::/32");
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.of("10.0.0.0/33"))
			.withMessage("'10.0.0.0/33' has prefix length '33'; allowed: 0 .. 32");
	}

}
