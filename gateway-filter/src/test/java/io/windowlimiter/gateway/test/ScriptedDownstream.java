package io.windowlimiter.gateway.test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * A real HTTP server behind the gateway that answers as each request tells it: the status in
 * {@code X-Downstream-Status} (default 200), a response header {@code X-Downstream-Cost} copied from the
 * request's {@code X-Downstream-Cost}, after {@code X-Downstream-Delay-Ms}; 503 to the first
 * {@code X-Downstream-Failures} requests of a path (a flaky upstream, for retries). It counts requests per path,
 * and notes when each arrived. On an event loop of its own, as {@link Downstream}.
 */
public final class ScriptedDownstream implements AutoCloseable {

	public static final String STATUS = "X-Downstream-Status";

	public static final String COST = "X-Downstream-Cost";

	public static final String DELAY = "X-Downstream-Delay-Ms";

	public static final String FAILURES = "X-Downstream-Failures";

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private final Map<String, List<Long>> arrivals = new ConcurrentHashMap<>();

	private final LoopResources loop = LoopResources.create("scripted-downstream", 1, true);

	private final DisposableServer server;

	private ScriptedDownstream() {
		this.server = HttpServer.create().runOn(this.loop).host("127.0.0.1").port(0).handle((request, response) -> {
			this.arrivals.computeIfAbsent(request.uri(), k -> new CopyOnWriteArrayList<>()).add(System.currentTimeMillis());
			int hit = this.hits.computeIfAbsent(request.uri(), k -> new AtomicInteger()).incrementAndGet();
			boolean fails = hit <= Integer.parseInt(request.requestHeaders().get(FAILURES, "0"));
			String status = fails ? "503" : request.requestHeaders().get(STATUS, "200");
			String cost = request.requestHeaders().get(COST);
			long delay = Long.parseLong(request.requestHeaders().get(DELAY, "0"));
			if (cost != null) {
				response.header(COST, cost);
			}
			// answered off the event loop: see Downstream
			return response.status(Integer.parseInt(status))
				.header("Content-Type", "text/plain")
				.sendString(Mono.just("downstream").delayElement(Duration.ofMillis(delay)).publishOn(Schedulers.parallel()));
		}).bindNow();
	}

	public static ScriptedDownstream start() {
		return new ScriptedDownstream();
	}

	public String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/** Requests that reached this server for one path (with its query). */
	public int hits(String path) {
		AtomicInteger count = this.hits.get(path);
		return (count != null) ? count.get() : 0;
	}

	/** When requests for one path (with its query) arrived here, in ms since the epoch, in arrival order. */
	public List<Long> arrivals(String path) {
		return List.copyOf(this.arrivals.getOrDefault(path, List.of()));
	}

	@Override
	public void close() {
		this.server.disposeNow();
		this.loop.disposeLater().block();
	}

}
