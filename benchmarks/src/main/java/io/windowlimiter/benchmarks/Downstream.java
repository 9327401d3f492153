package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The service behind the gateway in the HTTP benchmarks: nginx on loopback, one worker, no access log,
 * answering every request with a fixed 3-byte body. A process of its own, so that none of its work lands in
 * the benchmark's JVM (a downstream there took CPU from the load generator and diluted every ratio).
 * {@code benchmarks/run-all.sh} installs nginx where it is missing.
 */
final class Downstream implements AutoCloseable {

	private final Process nginx;

	private final int port;

	private final Path dir;

	Downstream() {
		this("location / { default_type text/plain; return 200 \"ok\\n\"; }");
	}

	/** nginx serving {@code locations} (directives of its one {@code server} block) instead of the fixed body. */
	Downstream(String locations) {
		this("", locations);
	}

	/**
	 * nginx answering the fixed body, and writing the time (epoch seconds, to the millisecond) and path of each
	 * request whose path matches {@code stampedPaths} (an nginx regular expression) to {@code accessLog}: the
	 * downstream's count of what the gateways let through, in time. One {@code write} per logged request, unbuffered,
	 * so the file is complete as soon as the requests are answered.
	 */
	static Downstream stamping(Path accessLog, String stampedPaths) {
		return new Downstream("log_format stamp '$msec $uri';", """
				location / { default_type text/plain; return 200 "ok\\n"; }
				location ~ %s { access_log %s stamp; default_type text/plain; return 200 "ok\\n"; }
				""".formatted(stampedPaths, accessLog));
	}

	/** As above, with {@code httpDirectives} in nginx's {@code http} block. */
	private Downstream(String httpDirectives, String locations) {
		try {
			this.port = freePort();
			this.dir = Files.createTempDirectory("bench-nginx");
			Files.createDirectories(this.dir.resolve("logs"));
			Path conf = this.dir.resolve("nginx.conf");
			Files.writeString(conf, """
					daemon off;
					worker_processes 1;
					error_log %s/logs/error.log warn;
					pid %s/nginx.pid;
					events { worker_connections 4096; }
					http {
						access_log off;
						%s
						keepalive_requests 1000000;
						# a gateway idle while another is measured keeps its pooled connections: closed after
						# nginx's default 75 s, the gateway's next request on one failed (500, premature close)
						keepalive_timeout 3600s;
						server {
							listen %s:%d;
							%s
						}
					}
					""".formatted(this.dir, this.dir, httpDirectives, LocalRedis.HOST, this.port, locations));
			this.nginx = new ProcessBuilder("nginx", "-p", this.dir.toString(), "-c", conf.toString())
				.redirectErrorStream(true)
				.redirectOutput(this.dir.resolve("logs/stdout.log").toFile())
				.start();
			awaitListening();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start nginx, the benchmark's downstream (is it installed?)", ex);
		}
	}

	/** The CPU nginx (master and worker) has used so far, from {@code /proc}. */
	java.time.Duration cpu() {
		java.time.Duration cpu = this.nginx.info().totalCpuDuration().orElse(java.time.Duration.ZERO);
		for (ProcessHandle child : this.nginx.descendants().toList()) {
			cpu = cpu.plus(child.info().totalCpuDuration().orElse(java.time.Duration.ZERO));
		}
		return cpu;
	}

	String uri() {
		return "http://" + LocalRedis.HOST + ":" + this.port;
	}

	@Override
	public void close() {
		this.nginx.destroy();
		try {
			if (!this.nginx.waitFor(5, TimeUnit.SECONDS)) {
				this.nginx.destroyForcibly();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void awaitListening() throws IOException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (true) {
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress(LocalRedis.HOST, this.port), 200);
				return;
			}
			catch (IOException ex) {
				if (!this.nginx.isAlive() || System.nanoTime() > deadline) {
					throw new IOException("nginx did not listen on " + this.port + "; see " + this.dir.resolve("logs"), ex);
				}
				try {
					Thread.sleep(20);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw new IOException(interrupted);
				}
			}
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
