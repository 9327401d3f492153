package io.windowlimiter.app.it;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/**
 * The service behind the gateway, answering as each request tells it: the status in
 * {@code X-Downstream-Status} (default 200), a response header {@code X-Downstream-Cost} copied from the
 * request's, after {@code X-Downstream-Delay-Ms}. The JDK's server on a thread pool, as {@link JdkDownstream}
 * (and for its reason); it counts the requests that reached it per path.
 */
final class ScriptedJdkDownstream implements AutoCloseable {

	static final String STATUS = "X-Downstream-Status";

	static final String COST = "X-Downstream-Cost";

	static final String DELAY = "X-Downstream-Delay-Ms";

	private static final byte[] BODY = "downstream".getBytes(StandardCharsets.US_ASCII);

	private final HttpServer server;

	private final ExecutorService pool;

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private ScriptedJdkDownstream() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
		this.pool = Executors.newFixedThreadPool(64);
		this.server.createContext("/", exchange -> {
			exchange.getRequestBody().readAllBytes();
			this.hits.computeIfAbsent(exchange.getRequestURI().getPath(), path -> new AtomicInteger()).incrementAndGet();
			String status = exchange.getRequestHeaders().getFirst(STATUS);
			String cost = exchange.getRequestHeaders().getFirst(COST);
			String delay = exchange.getRequestHeaders().getFirst(DELAY);
			if (delay != null) {
				try {
					Thread.sleep(Long.parseLong(delay));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			if (cost != null) {
				exchange.getResponseHeaders().set(COST, cost);
			}
			exchange.getResponseHeaders().set("Content-Type", "text/plain");
			exchange.sendResponseHeaders((status != null) ? Integer.parseInt(status) : 200, BODY.length);
			try (OutputStream body = exchange.getResponseBody()) {
				body.write(BODY);
			}
		});
		this.server.setExecutor(this.pool);
		this.server.start();
	}

	static ScriptedJdkDownstream start() {
		try {
			return new ScriptedJdkDownstream();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	/** Requests that reached this server on one path. */
	int hits(String path) {
		AtomicInteger count = this.hits.get(path);
		return (count != null) ? count.get() : 0;
	}

	@Override
	public void close() {
		this.server.stop(0);
		this.pool.shutdownNow();
	}

}
