package io.windowlimiter.gateway.test;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.netty.http.HttpResources;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tests' downstreams outlive Reactor Netty's shared loops, which every gateway context disposes when it
 * closes: a downstream bound to them could not be stopped while they were going (a CI run failed so, "Socket
 * couldn't be stopped within 3000ms", in PlanHeaderTrustTests). Here the loops are disposed without waiting,
 * and the downstreams stopped meanwhile: with the shared loops this failed as in CI.
 */
class DownstreamTests {

	@Test
	void aDownstreamStopsAfterTheSharedLoopsWereDisposed() {
		for (int round = 0; round < 5; round++) {
			Downstream downstream = Downstream.start();
			ScriptedDownstream scripted = ScriptedDownstream.start();
			HttpResources.disposeLoopsAndConnectionsLater(Duration.ZERO, Duration.ofSeconds(5)).subscribe();
			long started = System.nanoTime();
			downstream.close();
			scripted.close();
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
		}
	}

}
