package io.windowlimiter.core.key;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client sending keyless requests as fast as it can gets each a problem body, and the log one line a minute
 * (attack r3, finding 7: at DEBUG, 5,002 lines for 5,002 requests, each written on the request's thread).
 */
@ExtendWith(OutputCaptureExtension.class)
class MissingKeyUnitTests {

	@Test
	void thousandsOfKeylessRequestsLogOneLine(CapturedOutput output) throws InterruptedException {
		for (int i = 0; i < 5_000; i++) {
			MissingKey.log("orders", 403, new HeaderKeyResolverStandIn());
		}
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (!output.getOut().contains("refused a request") && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		Thread.sleep(200);
		assertThat(output.getOut().split("Route 'orders' refused a request with 403", -1)).as(output.getOut())
			.hasSize(2);
		assertThat(output.getOut()).contains("no client key in it (the X-API-Key header)");
		assertThat(MissingKey.problem(403, "Forbidden", new HeaderKeyResolverStandIn())).isEqualTo(
				"{\"type\":\"about:blank\",\"title\":\"Forbidden\",\"status\":403,\"detail\":\"This route counts requests "
						+ "per client by the X-API-Key header, and the request has none; send it\"}");
	}

	/** What a header resolver of either server says it reads. */
	private static final class HeaderKeyResolverStandIn implements KeySource {

		@Override
		public String keySource() {
			return "the X-API-Key header";
		}

	}

}
