package io.windowlimiter.gateway.test;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * A real HTTP server standing in for the service behind the gateway. It answers every request with 200
 * and counts what reached it, per path and X-API-Key, so tests can prove a denied request never did.
 * It runs on an event loop of its own: a gateway context that closes disposes Reactor Netty's shared loops,
 * and a server bound to them could then no longer be stopped ("Socket couldn't be stopped within 3000ms").
 */
public final class Downstream implements AutoCloseable {

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private final AtomicInteger total = new AtomicInteger();

	private final LoopResources loop = LoopResources.create("downstream", 1, true);

	private final DisposableServer server;

	private Downstream() {
		this.server = HttpServer.create().runOn(this.loop).host("127.0.0.1").port(0).handle((request, response) -> {
			this.total.incrementAndGet();
			String client = request.requestHeaders().get("X-API-Key", "-");
			this.hits.computeIfAbsent(request.uri() + " " + client, k -> new AtomicInteger()).incrementAndGet();
			// answered off the event loop: a synchronous answer can stall a keep-alive connection on
			// Reactor Netty 1.3.6 (reactor/reactor-netty#4361, see the library's ReadyAnswer)
			return response.status(200)
				.header("Content-Type", "text/plain")
				.sendString(Mono.just("downstream").publishOn(Schedulers.parallel()));
		}).bindNow();
	}

	public static Downstream start() {
		return new Downstream();
	}

	public String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/** Requests that reached this server for one path and X-API-Key value. */
	public int hits(String path, String apiKey) {
		AtomicInteger count = this.hits.get(path + " " + apiKey);
		return (count != null) ? count.get() : 0;
	}

	/** All requests that reached this server. */
	public int total() {
		return this.total.get();
	}

	@Override
	public void close() {
		this.server.disposeNow();
		this.loop.disposeLater().block();
	}

}
