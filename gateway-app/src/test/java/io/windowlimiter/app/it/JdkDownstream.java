package io.windowlimiter.app.it;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpServer;

/**
 * The service behind the gateway: the JDK's HTTP server on a thread pool, answering 200 to everything.
 *
 * <p>Not gateway-filter's Reactor Netty {@code Downstream}: it answers synchronously, so on Reactor Netty
 * 1.3.6 it can itself stop reading one of the gateway's pooled keep-alive connections
 * (reactor/reactor-netty#4361), and the gateway then waits for it forever. That is a hang of the test's
 * downstream, not of the gateway under test.
 */
final class JdkDownstream implements AutoCloseable {

	private static final byte[] BODY = "downstream".getBytes(StandardCharsets.US_ASCII);

	private final HttpServer server;

	private final ExecutorService pool;

	private JdkDownstream(HttpServer server, ExecutorService pool) {
		this.server = server;
		this.pool = pool;
	}

	static JdkDownstream start() {
		try {
			HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
			server.createContext("/", exchange -> {
				exchange.getRequestBody().readAllBytes();
				exchange.getResponseHeaders().set("Content-Type", "text/plain");
				exchange.sendResponseHeaders(200, BODY.length);
				try (OutputStream body = exchange.getResponseBody()) {
					body.write(BODY);
				}
			});
			ExecutorService pool = Executors.newFixedThreadPool(16);
			server.setExecutor(pool);
			server.start();
			return new JdkDownstream(server, pool);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	@Override
	public void close() {
		this.server.stop(0);
		this.pool.shutdownNow();
	}

}
