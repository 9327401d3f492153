package io.windowlimiter.benchmarks;

import java.nio.charset.StandardCharsets;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The service behind the gateway in the HTTP benchmark: a Reactor Netty server on loopback that
 * answers every request with a fixed 3-byte body, as cheaply as a server can.
 */
final class Downstream implements AutoCloseable {

	private static final byte[] BODY = "ok\n".getBytes(StandardCharsets.US_ASCII);

	private final DisposableServer server;

	Downstream() {
		this.server = HttpServer.create()
			.host(LocalRedis.HOST)
			.port(0)
			.handle((request, response) -> response.header("Content-Type", "text/plain")
				.header("Content-Length", Integer.toString(BODY.length))
				.sendByteArray(Mono.just(BODY)))
			.bindNow();
	}

	String uri() {
		return "http://" + LocalRedis.HOST + ":" + this.server.port();
	}

	@Override
	public void close() {
		this.server.disposeNow();
	}

}
