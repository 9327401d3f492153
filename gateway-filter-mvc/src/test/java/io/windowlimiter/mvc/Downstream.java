package io.windowlimiter.mvc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/** A real HTTP server behind the gateway: answers 200 and counts what reached it, per path and X-API-Key. */
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
			this.hits.computeIfAbsent(exchange.getRequestURI().getPath() + " " + key, k -> new AtomicInteger())
				.incrementAndGet();
			byte[] body = "downstream".getBytes(StandardCharsets.US_ASCII);
			exchange.sendResponseHeaders(200, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		this.server.setExecutor(Executors.newFixedThreadPool(8));
		this.server.start();
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
