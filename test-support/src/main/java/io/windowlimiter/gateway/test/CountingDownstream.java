package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/**
 * A real HTTP server behind the gateway (the JDK's, so it shares no event loop with a gateway under test): counts
 * what reached it, per path and X-API-Key, and the most requests of one path it held at once, and answers 200, or
 * what the query asks: {@code status=401} that status, {@code cost=2} an {@code X-Actual-Cost: 2} header,
 * {@code delay=300} after 300 ms, {@code fail=2} 502 to the first two requests of that path and key.
 */
public final class CountingDownstream implements AutoCloseable {

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> mostInFlight = new ConcurrentHashMap<>();

	private final HttpServer server;

	private final ExecutorService executor = Executors.newFixedThreadPool(16);

	public CountingDownstream() {
		try {
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 100);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.createContext("/", exchange -> {
			String path = exchange.getRequestURI().getPath();
			String key = exchange.getRequestHeaders().getFirst("X-API-Key");
			int hit = this.hits.computeIfAbsent(path + " " + key, k -> new AtomicInteger()).incrementAndGet();
			AtomicInteger held = this.inFlight.computeIfAbsent(path, k -> new AtomicInteger());
			this.mostInFlight.computeIfAbsent(path, k -> new AtomicInteger()).accumulateAndGet(held.incrementAndGet(),
					Math::max);
			try {
				Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
				if (query.containsKey("delay")) {
					sleep(Long.parseLong(query.get("delay")));
				}
				if (query.containsKey("cost")) {
					exchange.getResponseHeaders().set("X-Actual-Cost", query.get("cost"));
				}
				byte[] body = "downstream".getBytes(StandardCharsets.US_ASCII);
				int status = Integer.parseInt(query.getOrDefault("status", "200"));
				if (hit <= Integer.parseInt(query.getOrDefault("fail", "0"))) {
					status = 502;
				}
				// held until the answer is written: a slot the gateway holds is counted here until then
				exchange.sendResponseHeaders(status, body.length);
				exchange.getResponseBody().write(body);
			}
			finally {
				held.decrementAndGet();
				exchange.close();
			}
		});
		this.server.setExecutor(this.executor);
		this.server.start();
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static Map<String, String> query(String query) {
		Map<String, String> values = new HashMap<>();
		if (query != null) {
			for (String pair : query.split("&")) {
				String[] nameValue = pair.split("=", 2);
				values.put(nameValue[0], (nameValue.length > 1) ? nameValue[1] : "");
			}
		}
		return values;
	}

	public String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	/** Requests that reached this server for one path and X-API-Key value ({@code null}: none sent). */
	public int hits(String path, String apiKey) {
		AtomicInteger count = this.hits.get(path + " " + apiKey);
		return (count != null) ? count.get() : 0;
	}

	/** The most requests of {@code path} this server held at once. */
	public int mostAtOnce(String path) {
		AtomicInteger most = this.mostInFlight.get(path);
		return (most != null) ? most.get() : 0;
	}

	@Override
	public void close() {
		this.server.stop(0);
		this.executor.shutdownNow();
	}

}
