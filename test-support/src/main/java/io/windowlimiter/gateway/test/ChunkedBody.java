package io.windowlimiter.gateway.test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * A POST whose body a test sends in chunks over a raw socket, as slowly as it likes, and may never end: what an
 * HTTP client library will not do. The start of a JSON chat request, then filler bytes on demand, then (or never)
 * the end of the JSON and the last chunk; and the answer as the server sent it.
 */
public final class ChunkedBody implements AutoCloseable {

	private final Socket socket;

	private final OutputStream out;

	private final ByteArrayOutputStream answer = new ByteArrayOutputStream();

	private ChunkedBody(Socket socket) throws IOException {
		this.socket = socket;
		this.out = socket.getOutputStream();
	}

	/** Opens the connection and sends the request head and the JSON's start, keyed by {@code X-API-Key}. */
	public static ChunkedBody start(int port, String path, String key) {
		try {
			ChunkedBody body = new ChunkedBody(new Socket("127.0.0.1", port));
			body.out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + key
					+ "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			body.chunk("{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"");
			return body;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Sends {@code bytes} more filler bytes of the message's content, in one chunk. */
	public ChunkedBody send(int bytes) {
		byte[] filler = new byte[bytes];
		Arrays.fill(filler, (byte) 'a');
		chunk(new String(filler, StandardCharsets.US_ASCII));
		return this;
	}

	/** Ends the JSON and the body. */
	public ChunkedBody end() {
		chunk("\"}]}");
		try {
			this.out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
			this.out.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return this;
	}

	private void chunk(String text) {
		byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
		try {
			this.out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
			this.out.write(bytes);
			this.out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
			this.out.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * What the server answered within {@code within} (the status line, headers and as much of the body as came;
	 * empty when nothing did).
	 */
	public String answer(Duration within) {
		long deadline = System.nanoTime() + within.toNanos();
		try {
			InputStream in = this.socket.getInputStream();
			byte[] buffer = new byte[8192];
			while (System.nanoTime() < deadline) {
				this.socket.setSoTimeout((int) Math.max(1, Math.min(200, (deadline - System.nanoTime()) / 1_000_000)));
				try {
					int n = in.read(buffer);
					if (n < 0) {
						break;
					}
					this.answer.write(buffer, 0, n);
					String text = this.answer.toString(StandardCharsets.ISO_8859_1);
					int head = text.indexOf("\r\n\r\n");
					int length = text.toLowerCase().indexOf("content-length:");
					if (head > 0 && length > 0 && length < head) {
						int value = Integer.parseInt(text.substring(length + 15, text.indexOf("\r\n", length)).trim());
						if (text.length() >= head + 4 + value) {
							break;
						}
					}
					// a chunked answer (Tomcat's to a body it relayed) ends with its last chunk: not waited out
					if (head > 0 && text.substring(0, head).toLowerCase().contains("transfer-encoding: chunked")
							&& text.endsWith("\r\n0\r\n\r\n")) {
						break;
					}
				}
				catch (SocketTimeoutException ex) {
					// nothing more yet
				}
			}
		}
		catch (IOException ex) {
			// closed by the server: what came is the answer
		}
		return this.answer.toString(StandardCharsets.ISO_8859_1);
	}

	@Override
	public void close() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			// closing
		}
	}

}
