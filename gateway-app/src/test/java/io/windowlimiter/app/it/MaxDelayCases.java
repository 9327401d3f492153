package io.windowlimiter.app.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code window-rate-limiter.max-delay} through two packaged jars on one {@code redis-server}: requests
 * fired at once over keep-alive connections, spread over both instances, are held until the slot Redis
 * reserved for them (the same slot is never promised twice, whichever instance asks), then passed; the rest
 * get 429. Both jars run with {@code window-rate-limiter.max-delayed=6}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MaxDelayCases {

	/** How much later than its slot a held request may be answered: timer, round trips, a loaded machine. */
	private static final long LATE = 1_000;

	private static final int MAX_DELAYED = 6;

	/** The bound of held requests per instance (the pair's; only routes with a max-delay hold any). */
	static final List<String> ARGS = List.of("--window-rate-limiter.max-delayed=" + MAX_DELAYED);

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private final List<GatewayJar> gateways;

	MaxDelayCases(JarPair pair) {
		this.gateways = pair.both();
	}

	static void routes(RouteFile routes) {
		// 3 per 3 s window, held up to a window: this window's room now, the next window's at its start
		routes.route("held-window", RouteFile.with(RouteFile.limit("fixed-window", 3, "3s"), "max-delay", "3s"));
		// one every 250 ms, 2 at once, held up to 1 s
		routes.route("held-bucket",
				RouteFile.with(RouteFile.with(RouteFile.limit("token-bucket", 4, "1s"), "burst", 2), "max-delay", "1s"));
		// one every 500 ms, held up to 20 s: more would wait than one instance may hold
		routes.route("held-bound",
				RouteFile.with(RouteFile.with(RouteFile.limit("token-bucket", 2, "1s"), "burst", 1), "max-delay", "20s"));
	}

	/** One request's answer: status, when it was sent and answered (epoch ms), and its Retry-After. */
	private record Sent(int status, long sentAt, long answeredAt, String retryAfter) {

		long took() {
			return this.answeredAt - this.sentAt;
		}

	}

	/**
	 * Opens one keep-alive connection per request (spread over the gateways in turn), then sends every
	 * request at once, one per connection.
	 */
	private static List<Sent> fire(List<GatewayJar> gateways, String path, String apiKey, int requests, Duration bound)
			throws Exception {
		return fire(gateways, path, apiKey, requests, bound, () -> {
		});
	}

	/**
	 * As {@link #fire(List, String, String, int, Duration)}; each connection first sends one request of a
	 * client of its own (so that the first answers of a fresh jar are not slow ones), then {@code justBefore}
	 * runs, then every request is sent.
	 */
	private static List<Sent> fire(List<GatewayJar> gateways, String path, String apiKey, int requests, Duration bound,
			Runnable justBefore) throws Exception {
		List<KeepAliveConnection> connections = new ArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(requests);
		try {
			for (int i = 0; i < requests; i++) {
				KeepAliveConnection connection = KeepAliveConnection.open(gateways.get(i % gateways.size()).port(), bound);
				connections.add(connection);
				assertThat(connection.get(path, apiKey + "-warm-" + i).status()).isEqualTo(200);
			}
			justBefore.run();
			CyclicBarrier together = new CyclicBarrier(requests);
			List<Future<Sent>> answers = new ArrayList<>();
			for (KeepAliveConnection connection : connections) {
				answers.add(pool.submit(() -> {
					together.await();
					long sentAt = System.currentTimeMillis();
					KeepAliveConnection.Answer answer = connection.get(path, apiKey);
					return new Sent(answer.status(), sentAt, System.currentTimeMillis(), answer.headers().get("retry-after"));
				}));
			}
			List<Sent> sent = new ArrayList<>();
			for (Future<Sent> answer : answers) {
				sent.add(answer.get());
			}
			sent.sort(Comparator.comparingLong(Sent::answeredAt));
			return sent;
		}
		finally {
			connections.forEach(KeepAliveConnection::close);
			pool.shutdownNow();
		}
	}

	/** Sleeps until {@code offset} ms into a window of {@code window} ms, on the clock Redis shares with us. */
	private static void awaitWindowOffset(long window, long offset) {
		long now = System.currentTimeMillis();
		long wait = Math.floorMod(offset - now, window);
		GatewayJar.sleep(wait);
	}

	@Test
	void aWindowsRoomNowTheNextWindowsAtItsStartTheRestRefused() throws Exception {
		List<Sent> sent = fire(this.gateways, "/held-window/get", "window-" + this.run, 9, Duration.ofSeconds(10),
				() -> awaitWindowOffset(3_000, 150));
		long edge = (sent.stream().mapToLong(Sent::sentAt).min().orElseThrow() / 3_000 + 1) * 3_000;
		List<Sent> passed = sent.stream().filter(s -> s.status() == 200).toList();
		List<Sent> refused = sent.stream().filter(s -> s.status() == 429).toList();
		assertThat(passed).as(sent.toString()).hasSize(6);
		assertThat(refused).as(sent.toString()).hasSize(3);
		List<Sent> atOnce = passed.subList(0, 3);
		List<Sent> atEdge = passed.subList(3, 6);
		assertThat(atOnce).as("before the edge: " + sent).allMatch(s -> s.answeredAt() < edge);
		assertThat(atEdge).as("held until the next window, not later than a little: " + sent)
			.allMatch(s -> s.answeredAt() >= edge && s.answeredAt() < edge + LATE);
		// the window after next begins more than 3 s away: refused at once, told when a hold would reach it
		// (about 2.85 s: 3 s, rounded up)
		assertThat(refused).as(sent.toString())
			.allMatch(s -> s.answeredAt() < edge && List.of("2", "3").contains(s.retryAfter()));
		assertThat(sent).as("none waits past the max-delay and a little").allMatch(s -> s.took() < 3_000 + LATE);
		System.out.printf("held-window: sent %d ms before the edge; held answered %s ms after it%n",
				edge - sent.get(0).sentAt(), atEdge.stream().map(s -> s.answeredAt() - edge).toList());
	}

	@Test
	void aBucketsSlotsArePromisedOnceAcrossInstances() throws Exception {
		List<Sent> sent = fire(this.gateways, "/held-bucket/get", "bucket-" + this.run, 12, Duration.ofSeconds(10));
		List<Sent> passed = sent.stream().filter(s -> s.status() == 200).toList();
		// 2 at once, then one every 250 ms up to 1 s: 6 in all (a decision made later finds a slot nearer)
		assertThat(passed).as(sent.toString()).hasSizeBetween(6, 7);
		assertThat(sent.stream().filter(s -> s.status() == 429)).hasSize(12 - passed.size());
		long first = sent.stream().mapToLong(Sent::sentAt).min().orElseThrow();
		List<Long> answered = passed.stream().map(s -> s.answeredAt() - first).toList();
		// the k-th held one passes no sooner than its slot, k intervals after the two at once
		for (int k = 2; k < passed.size(); k++) {
			assertThat(answered.get(k)).as("answered at " + answered).isGreaterThanOrEqualTo(250L * (k - 1) - 30);
		}
		assertThat(sent).as("none waits past the max-delay and a little").allMatch(s -> s.took() < 1_000 + LATE);
		System.out.printf("held-bucket: passed at %s ms%n", answered);
	}

	@Test
	void theEndpointShowsEachRoutesMaxDelay() {
		GatewayJar.Probe routes = this.gateways.get(1).get("/actuator/ratelimits", Duration.ofSeconds(10));
		assertThat(routes.status()).as(routes.toString()).isEqualTo(200);
		assertThat(routes.body()).contains("\"held-window\":{").contains("\"maxDelay\":\"PT3S\"")
			.contains("\"maxDelay\":\"PT1S\"").contains("\"maxDelay\":\"PT20S\"");
	}

	@Test
	void anInstanceHoldsNoMoreThanMaxDelayed() throws Exception {
		GatewayJar a = this.gateways.get(0);
		List<Sent> sent = fire(List.of(a), "/held-bound/get", "bound-" + this.run, 12, Duration.ofSeconds(30));
		List<Sent> passed = sent.stream().filter(s -> s.status() == 200).toList();
		// the first answered passed at once, every other was held
		List<Sent> held = passed.subList(1, passed.size());
		List<Sent> refused = sent.stream().filter(s -> s.status() == 429).toList();
		// one passes at once; of the others, those given leave are held (at most 6 at once), the rest are
		// refused at once: their slots, seconds away, are not reserved
		assertThat(held).as(sent.toString()).hasSizeBetween(1, MAX_DELAYED);
		assertThat(refused).as(sent.toString()).hasSizeGreaterThanOrEqualTo(12 - 1 - MAX_DELAYED);
		assertThat(refused).as(sent.toString()).allMatch(s -> s.took() < LATE && "1".equals(s.retryAfter()));
		// slots are 500 ms apart: the last held one passes at the slot of however many were held
		long longest = held.stream().mapToLong(Sent::took).max().orElseThrow();
		assertThat(longest).isBetween(500L * held.size() - 50, 500L * held.size() + LATE);
		System.out.printf("held-bound: %d held (longest %d ms), %d refused%n", held.size(), longest, refused.size());
	}

}
