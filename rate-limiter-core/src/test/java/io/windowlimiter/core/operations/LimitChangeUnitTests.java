package io.windowlimiter.core.operations;

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
	@ValueSource(strings = { LimitChange.RESET, LimitChange.ASSIGN, LimitChange.OVERRIDE, LimitChange.CLEAR })
	void everyTypeTravelsAndOnlyAResetLeavesAssignmentsAlone(String type) {
		LimitChange change = new LimitChange(type, "api", "client 1");
		assertThat(LimitChange.decode(change.encode())).isEqualTo(change);
		assertThat(change.changesAssignment()).isEqualTo(!type.equals(LimitChange.RESET));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "reset", "reset a", "reset a b c", "reset %zz b" })
	void ignoresWhatIsNotAChange(String message) {
		assertThat(LimitChange.decode(message)).isNull();
	}

}
