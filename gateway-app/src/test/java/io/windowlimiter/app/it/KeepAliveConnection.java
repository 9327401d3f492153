package io.windowlimiter.app.it;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One client's HTTP/1.1 keep-alive connection as a raw socket: each request is written on it and its
 * response read back whole (Content-Length or chunked) before the next is sent, so every request of a
 * client really travels on the same connection, one at a time, as browsers and most HTTP clients do.
 * No pipelining. A response that does not come within the bound is {@link Unanswered}; a connection the
 * gateway closes is {@link NotKeptAlive}.
 */
final class KeepAliveConnection implements AutoCloseable {

	private final Socket socket;

	private final InputStream in;

	private final OutputStream out;

	private final String host;

	private final long boundNanos;

	private KeepAliveConnection(Socket socket, String host, Duration bound) throws IOException {
		this.socket = socket;
		this.in = new BufferedInputStream(socket.getInputStream(), 8192);
		this.out = socket.getOutputStream();
		this.host = host;
		this.boundNanos = bound.toNanos();
	}

	/** @param bound how long a response may take before the request counts as unanswered */
	static KeepAliveConnection open(int port, Duration bound) throws IOException {
		Socket socket = new Socket();
		socket.setTcpNoDelay(true);
		socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
		socket.setSoTimeout((int) bound.toMillis());
		return new KeepAliveConnection(socket, "127.0.0.1:" + port, bound);
	}

	/** GET {@code path} with an {@code X-API-Key}; the answer, or an exception saying why there was none. */
	Answer get(String path, String apiKey) throws IOException {
		byte[] request = ("GET " + path + " HTTP/1.1\r\nHost: " + this.host + "\r\nX-API-Key: " + apiKey
				+ "\r\nAccept: */*\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
		long start = System.nanoTime();
		this.out.write(request);
		this.out.flush();
		try {
			String statusLine = line(start);
			if (statusLine == null) {
				throw new NotKeptAlive("the gateway closed the connection instead of answering");
			}
			int status = Integer.parseInt(statusLine.split(" ")[1]);
			Map<String, String> headers = new HashMap<>();
			for (String header = line(start); header != null && !header.isEmpty(); header = line(start)) {
				int colon = header.indexOf(':');
				headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
			}
			if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
				readChunked(start);
			}
			else {
				String length = headers.get("content-length");
				if (length == null) {
					throw new NotKeptAlive("a response without Content-Length or chunks: " + statusLine);
				}
				skip(Long.parseLong(length), start);
			}
			long nanos = System.nanoTime() - start;
			if ("close".equalsIgnoreCase(headers.get("connection"))) {
				throw new NotKeptAlive("the gateway answered " + status + " with Connection: close");
			}
			return new Answer(status, headers, nanos);
		}
		catch (SocketTimeoutException ex) {
			throw new Unanswered(System.nanoTime() - start);
		}
	}

	private void readChunked(long start) throws IOException {
		while (true) {
			String size = line(start);
			if (size == null) {
				throw new EOFException("connection closed within a chunked body");
			}
			int semicolon = size.indexOf(';');
			long length = Long.parseLong((semicolon < 0) ? size.trim() : size.substring(0, semicolon).trim(), 16);
			if (length == 0) {
				// trailers, up to the empty line
				for (String trailer = line(start); trailer != null && !trailer.isEmpty(); trailer = line(start)) {
				}
				return;
			}
			skip(length, start);
			line(start);
		}
	}

	private void skip(long length, long start) throws IOException {
		for (long left = length; left > 0; left--) {
			read(start);
		}
	}

	/** A line without its CRLF, or null at the end of the stream before any byte of it. */
	private String line(long start) throws IOException {
		StringBuilder line = new StringBuilder();
		while (true) {
			int b = this.in.read();
			checkBound(start);
			if (b < 0) {
				return line.isEmpty() ? null : line.toString();
			}
			if (b == '\n') {
				int end = line.length();
				return (end > 0 && line.charAt(end - 1) == '\r') ? line.substring(0, end - 1) : line.toString();
			}
			line.append((char) b);
		}
	}

	private int read(long start) throws IOException {
		int b = this.in.read();
		checkBound(start);
		if (b < 0) {
			throw new EOFException("connection closed within a response");
		}
		return b;
	}

	/** The socket timeout bounds each read; this bounds the whole response. */
	private void checkBound(long start) throws SocketTimeoutException {
		if (System.nanoTime() - start > this.boundNanos) {
			throw new SocketTimeoutException();
		}
	}

	@Override
	public void close() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
	}

	/** A whole response: status, headers (names in lower case), and how long it took from the request. */
	record Answer(int status, Map<String, String> headers, long nanos) {
	}

	/** No (whole) response within the bound. */
	static final class Unanswered extends IOException {

		final long waitedNanos;

		Unanswered(long waitedNanos) {
			super("no response within " + Duration.ofNanos(waitedNanos).toMillis() + " ms");
			this.waitedNanos = waitedNanos;
		}

	}

	/** The gateway ended the keep-alive connection (closed it, or said it would). */
	static final class NotKeptAlive extends IOException {

		NotKeptAlive(String message) {
			super(message);
		}

	}

}
