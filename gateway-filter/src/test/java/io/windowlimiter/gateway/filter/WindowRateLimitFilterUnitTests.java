package io.windowlimiter.gateway.filter;

import java.util.Map;

import io.windowlimiter.core.CountStatuses;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The filter's own arguments, read without a gateway. */
class WindowRateLimitFilterUnitTests {

	@Test
	void countStatusesTakesCodesAndClasses() {
		CountStatuses statuses = CountStatuses.parse("login", "401, 403,5xx");
		assertThat(statuses.counts(401)).isTrue();
		assertThat(statuses.counts(403)).isTrue();
		assertThat(statuses.counts(500)).isTrue();
		assertThat(statuses.counts(599)).isTrue();
		assertThat(statuses.counts(400)).isFalse();
		assertThat(statuses.counts(200)).isFalse();
		assertThat(statuses.counts(-1)).isFalse();
		assertThat(statuses.counts(600)).isFalse();
		for (String bad : new String[] { "", "4xx,", "600", "099", "6xx", "40", "abc", "4XX1" }) {
			assertThatThrownBy(() -> CountStatuses.parse("login", bad)).as(bad)
				.isInstanceOf(InvalidRouteConfigurationException.class)
				.hasMessageContaining("count-statuses is '" + bad + "'");
		}
	}

	@Test
	void theFilterIdNamesItsPolicy() {
		assertThat(FilterSettings.of("orders", Map.of("key-resolver", "k")).policyId()).isEqualTo("orders");
		assertThat(FilterSettings.of("orders", Map.of("key-resolver", "k", "id", "ip")).policyId()).isEqualTo("orders@ip");
		assertThatThrownBy(() -> FilterSettings.of("orders", Map.of("key-resolver", "k", "id", "a@b")))
			.hasMessageStartingWith("Invalid rate limit on route 'orders': id is 'a@b'");
	}

	@Test
	void headerNamesAndStatusesAreChecked() {
		FilterSettings settings = FilterSettings.of("batch", Map.of("key-resolver", "k", "cost-from-header", "X-Batch-Size",
				"cost-from-response-header", "X-Cost", "status-code", "503"));
		assertThat(settings.costFromHeader()).isEqualTo("X-Batch-Size");
		assertThat(settings.statusCode()).isEqualTo(503);
		assertThat(settings.settlesOnResponse()).isTrue();
		assertThat(FilterSettings.of("batch", Map.of("key-resolver", "k")).settlesOnResponse()).isFalse();
		assertThatThrownBy(() -> FilterSettings.of("batch", Map.of("key-resolver", "k", "cost-from-header", "X Cost")))
			.hasMessage("Invalid rate limit on route 'batch': cost-from-header is 'X Cost'; allowed: the name of an HTTP "
					+ "header, such as X-Cost");
		assertThatThrownBy(() -> FilterSettings.of("batch", Map.of("key-resolver", "k", "status-code", "200")))
			.hasMessage("Invalid rate limit on route 'batch': status-code is '200'; allowed: an HTTP status code from "
					+ "400 to 599");
	}

	/** The same message as Server MVC's start-up check gives (there with the property's whole path). */
	@Test
	void denyEmptyKeyIsTrueOrFalse() {
		assertThat(FilterSettings.of("batch", Map.of("key-resolver", "k")).denyEmptyKey()).isTrue();
		assertThat(FilterSettings.of("batch", Map.of("key-resolver", "k", "deny-empty-key", "false")).denyEmptyKey())
			.isFalse();
		assertThatThrownBy(() -> FilterSettings.of("batch", Map.of("key-resolver", "k", "deny-empty-key", "maybe")))
			.hasMessage("Invalid rate limit on route 'batch': deny-empty-key is 'maybe'; allowed: true or false");
	}

}
