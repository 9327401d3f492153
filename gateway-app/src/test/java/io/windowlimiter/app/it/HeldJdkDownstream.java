package io.windowlimiter.app.it;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A service behind the gateway that holds its answers until the test lets them go ({@link #open()}): a path
 * ending {@code /held} answers 200 once opened; a path ending {@code /stream} sends its response head and a
 * first SSE event at once, then a comment every 100 ms (so that it notices a connection the gateway closed),
 * and its last event once opened; any other path answers 200 at once. Counts, per path, the requests that
 * reached it, those still in it and the most in it at once. The JDK's server on a thread pool, as
 * {@link JdkDownstream} (and for its reason), each held request holding one of its threads.
 */
final class HeldJdkDownstream implements AutoCloseable {

	private static final byte[] BODY = "downstream".getBytes(StandardCharsets.US_ASCII);

	private final HttpServer server;

	private final ExecutorService pool;

	private final Map<String, Counts> counts = new ConcurrentHashMap<>();

	private volatile CountDownLatch gate = new CountDownLatch(1);

	private HeldJdkDownstream() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
		this.pool = Executors.newFixedThreadPool(64);
		this.server.createContext("/", this::answer);
		this.server.setExecutor(this.pool);
		this.server.start();
	}

	static HeldJdkDownstream start() {
		try {
			return new HeldJdkDownstream();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private void answer(HttpExchange exchange) throws IOException {
		exchange.getRequestBody().readAllBytes();
		String path = exchange.getRequestURI().getPath();
		Counts counts = this.counts.computeIfAbsent(path, p -> new Counts());
		counts.arrived();
		CountDownLatch gate = this.gate;
		try {
			if (path.endsWith("/stream")) {
				exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
				exchange.sendResponseHeaders(200, 0);
				OutputStream body = exchange.getResponseBody();
				write(body, "data: first\n\n");
				while (!gate.await(100, TimeUnit.MILLISECONDS)) {
					write(body, ": held\n\n");
				}
				write(body, "data: last\n\n");
				return;
			}
			if (path.endsWith("/held")) {
				gate.await();
			}
			exchange.getResponseHeaders().set("Content-Type", "text/plain");
			exchange.sendResponseHeaders(200, BODY.length);
			exchange.getResponseBody().write(BODY);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			// also when a write failed: the gateway closed the connection (its client went away)
			exchange.close();
			counts.left();
		}
	}

	private static void write(OutputStream body, String text) throws IOException {
		body.write(text.getBytes(StandardCharsets.US_ASCII));
		body.flush();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	/** Requests arriving from now on are held until {@link #open()}. */
	void hold() {
		this.gate = new CountDownLatch(1);
	}

	/** Lets every held request answer, and those arriving until the next {@link #hold()} answer at once. */
	void open() {
		this.gate.countDown();
	}

	/** Requests that reached this server on one path. */
	int hits(String path) {
		return counts(path).hits.get();
	}

	/** Requests on one path not yet answered in full. */
	int inFlight(String path) {
		return counts(path).inFlight.get();
	}

	/** The most requests on one path that were in it at once. */
	int maxInFlight(String path) {
		return counts(path).maxInFlight.get();
	}

	private Counts counts(String path) {
		return this.counts.getOrDefault(path, new Counts());
	}

	@Override
	public void close() {
		open();
		this.server.stop(0);
		this.pool.shutdownNow();
	}

	private static final class Counts {

		final AtomicInteger hits = new AtomicInteger();

		final AtomicInteger inFlight = new AtomicInteger();

		final AtomicInteger maxInFlight = new AtomicInteger();

		void arrived() {
			this.hits.incrementAndGet();
			this.maxInFlight.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
		}

		void left() {
			this.inFlight.decrementAndGet();
		}

	}

}
