package io.windowlimiter.mvc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/**
 * A real HTTP server behind the gateway: counts what reached it, per path and X-API-Key, and answers 200,
 * or what the query asks: {@code status=401} that status, {@code cost=2} an {@code X-Actual-Cost: 2} header,
 * {@code delay=300} after 300 ms, {@code fail=2} 502 to the first two requests of that path and key.
 */
final class Downstream implements AutoCloseable {

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private final HttpServer server;

	Downstream() {
		try {
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 100);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.createContext("/", exchange -> {
			String key = exchange.getRequestHeaders().getFirst("X-API-Key");
			int hit = this.hits.computeIfAbsent(exchange.getRequestURI().getPath() + " " + key, k -> new AtomicInteger())
				.incrementAndGet();
			Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
			if (query.containsKey("delay")) {
				try {
					Thread.sleep(Long.parseLong(query.get("delay")));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			if (query.containsKey("cost")) {
				exchange.getResponseHeaders().set("X-Actual-Cost", query.get("cost"));
			}
			byte[] body = "downstream".getBytes(StandardCharsets.US_ASCII);
			int status = Integer.parseInt(query.getOrDefault("status", "200"));
			if (hit <= Integer.parseInt(query.getOrDefault("fail", "0"))) {
				status = 502;
			}
			exchange.sendResponseHeaders(status, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		this.server.setExecutor(Executors.newFixedThreadPool(16));
		this.server.start();
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

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	int hits(String path, String apiKey) {
		AtomicInteger count = this.hits.get(path + " " + apiKey);
		return (count != null) ? count.get() : 0;
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

}
