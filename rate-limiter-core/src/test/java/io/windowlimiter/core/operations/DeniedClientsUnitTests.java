package io.windowlimiter.core.operations;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DeniedClientsUnitTests {

	private final AtomicLong nanos = new AtomicLong(Duration.ofHours(1).toNanos());

	private final DeniedClients denied = new DeniedClients(4, Duration.ofMinutes(1), 5, this.nanos::get);

	@Test
	void listsTheClientsDeniedMostPerRoute() {
		deny("orders", "alice", 3);
		deny("orders", "bob", 5);
		deny("search", "carol", 9);
		assertThat(this.denied.top("orders", 10)).containsExactly(new DeniedClients.DeniedClient("bob", 5, 0),
				new DeniedClients.DeniedClient("alice", 3, 0));
		assertThat(this.denied.top("orders", 1)).extracting(DeniedClients.DeniedClient::client).containsExactly("bob");
		assertThat(this.denied.top("unknown", 10)).isEmpty();
		assertThat(this.denied.window()).isEqualTo(Duration.ofMinutes(5));
	}

	@Test
	void addsUpTheSlotsOfTheWindowAndForgetsOlderOnes() {
		deny("orders", "alice", 4);
		advance(Duration.ofMinutes(2));
		deny("orders", "alice", 1);
		deny("orders", "bob", 3);
		assertThat(this.denied.top("orders", 10)).containsExactly(new DeniedClients.DeniedClient("alice", 5, 0),
				new DeniedClients.DeniedClient("bob", 3, 0));
		advance(Duration.ofMinutes(3));
		assertThat(this.denied.top("orders", 10)).as("alice's first minute has left the window")
			.containsExactly(new DeniedClients.DeniedClient("bob", 3, 0), new DeniedClients.DeniedClient("alice", 1, 0));
		advance(Duration.ofMinutes(10));
		assertThat(this.denied.top("orders", 10)).isEmpty();
	}

	/** However many distinct clients are refused, a route holds at most counters x slots of them. */
	@Test
	void staysBoundedUnderManyDistinctClients() {
		for (int minute = 0; minute < 5; minute++) {
			for (int i = 0; i < 10_000; i++) {
				this.denied.denied("orders", "scan-" + minute + "-" + i);
				if (i % 2 == 0) { // a third of the denials: above 1 / counters, so always held
					this.denied.denied("orders", "flood");
				}
			}
			advance(Duration.ofMinutes(1));
		}
		advance(Duration.ofMinutes(-1));
		assertThat(this.denied.top("orders", 100)).hasSizeLessThanOrEqualTo(4 * 5);
		assertThat(this.denied.top("orders", 1).get(0).client()).isEqualTo("flood");
	}

	/** A hostile 7 KB key is held as 64 characters, its length and hash; two such keys stay apart. */
	@Test
	void holdsLongKeysShortened() {
		String first = "k".repeat(7_000);
		String second = "k".repeat(6_999) + "x";
		deny("orders", first, 2);
		deny("orders", second, 1);
		assertThat(this.denied.top("orders", 10)).extracting(DeniedClients.DeniedClient::client)
			.containsExactly(DeniedClients.shown(first), DeniedClients.shown(second))
			.allSatisfy(client -> assertThat(client).hasSizeLessThanOrEqualTo(DeniedClients.MAX_SHOWN)
				.startsWith("k".repeat(64)));
		assertThat(DeniedClients.shown("alice")).isEqualTo("alice");
	}

	/** Threads offer to stripes of their own; a read adds them up. */
	@Test
	void addsUpWhatEveryThreadCounted() throws InterruptedException {
		Thread[] threads = new Thread[8];
		for (int t = 0; t < threads.length; t++) {
			threads[t] = new Thread(() -> deny("orders", "flood", 1_000));
			threads[t].start();
		}
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(this.denied.top("orders", 10)).containsExactly(new DeniedClients.DeniedClient("flood", 8_000, 0));
	}

	private void deny(String route, String client, int times) {
		for (int i = 0; i < times; i++) {
			this.denied.denied(route, client);
		}
	}

	private void advance(Duration duration) {
		this.nanos.addAndGet(duration.toNanos());
	}

}
