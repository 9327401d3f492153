package io.windowlimiter.gateway.operations;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class LimitChangeUnitTests {

	@ParameterizedTest
	@ValueSource(strings = { "plain", "a@b.example", "2001:db8::1", "a/b//c/", "with space", "line\nbreak", "ünï 🚀",
			"100% + more", "" })
	void travelsIntact(String client) {
		LimitChange change = LimitChange.reset("route one", client);
		assertThat(LimitChange.decode(change.encode())).isEqualTo(change);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "reset", "reset a", "reset a b c", "reset %zz b" })
	void ignoresWhatIsNotAChange(String message) {
		assertThat(LimitChange.decode(message)).isNull();
	}

}
