package io.windowlimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The budget's own accounting: bounded, every byte given back once, whatever thread closes a lease. */
class BufferedBodiesUnitTests {

	@Test
	void takesUpToTheBoundAndRefusesPastItTakingNothing() {
		BufferedBodies bodies = new BufferedBodies(100);
		BufferedBodies.Lease first = bodies.lease();
		BufferedBodies.Lease second = bodies.lease();
		assertThat(first.take(60)).isTrue();
		assertThat(second.take(41)).isFalse();
		assertThat(second.taken()).isZero();
		assertThat(bodies.buffered()).isEqualTo(60);
		assertThat(bodies.fits(40)).isTrue();
		assertThat(bodies.fits(41)).isFalse();
		assertThat(second.take(40)).isTrue();
		assertThat(bodies.buffered()).isEqualTo(100);
		first.close();
		second.close();
		assertThat(bodies.buffered()).isZero();
	}

	@Test
	void aLeaseGivesBackOnceAndTakesNothingAfterItIsClosed() {
		BufferedBodies bodies = new BufferedBodies(100);
		BufferedBodies.Lease lease = bodies.lease();
		lease.take(30);
		lease.take(20);
		lease.close();
		lease.close();
		assertThat(bodies.buffered()).isZero();
		assertThat(lease.take(10)).isFalse();
		assertThat(bodies.buffered()).isZero();
	}

	@Test
	void manyThreadsTakingAndClosingLeaveNothingAndNeverPassTheBound() throws InterruptedException {
		BufferedBodies bodies = new BufferedBodies(10_000);
		AtomicLong most = new AtomicLong();
		CountDownLatch go = new CountDownLatch(1);
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			Thread thread = new Thread(() -> {
				try {
					go.await();
				}
				catch (InterruptedException ex) {
					return;
				}
				for (int i = 0; i < 20_000; i++) {
					BufferedBodies.Lease lease = bodies.lease();
					for (int k = 0; k < 4 && lease.take(700); k++) {
						most.accumulateAndGet(bodies.buffered(), Math::max);
					}
					lease.close();
				}
			});
			thread.start();
			threads.add(thread);
		}
		go.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(bodies.buffered()).isZero();
		assertThat(most.get()).isPositive().isLessThanOrEqualTo(10_000);
	}

	@Test
	void theBoundIsOneByteOrMore() {
		assertThatIllegalArgumentException().isThrownBy(() -> new BufferedBodies(0))
			.withMessageContaining("max-buffered-bytes");
		assertThat(BufferedBodies.defaultMax()).isEqualTo(Runtime.getRuntime().maxMemory() / 8);
	}

}
