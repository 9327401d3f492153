package io.windowlimiter.app.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One HTTP/1.1 request on a connection of its own, made from a chosen loopback address: the gateway's TCP
 * peer is then that address. Every {@code 127.x.y.z} is this machine, so one test can play a client that
 * reaches the gateway directly ({@code 127.0.0.2}) beside a trusted proxy ({@code 127.0.0.1}).
 */
final class FromAddress {

	private FromAddress() {
	}

	/** GET {@code path} from {@code localAddress} with these headers; the response's status. */
	static int get(String localAddress, int port, String path, Map<String, String> headers) throws IOException {
		try (Socket socket = new Socket()) {
			socket.bind(new InetSocketAddress(localAddress, 0));
			socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
			socket.setSoTimeout(10_000);
			StringBuilder request = new StringBuilder("GET ").append(path)
				.append(" HTTP/1.1\r\nHost: 127.0.0.1:")
				.append(port)
				.append("\r\nConnection: close\r\n");
			headers.forEach((name, value) -> request.append(name).append(": ").append(value).append("\r\n"));
			OutputStream out = socket.getOutputStream();
			out.write(request.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			InputStream in = socket.getInputStream();
			StringBuilder statusLine = new StringBuilder();
			for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
				statusLine.append((char) c);
			}
			String[] parts = statusLine.toString().split(" ");
			if (parts.length < 2) {
				throw new IOException("No status line from the gateway: '" + statusLine + "'");
			}
			return Integer.parseInt(parts[1]);
		}
	}

}
