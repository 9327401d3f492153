package io.windowlimiter.app.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What a test reads from {@code INFO} of a real Redis, over a socket of its own (no client library). */
final class RedisInfo {

	private static final Pattern CALLS = Pattern.compile("cmdstat_(eval|evalsha):calls=(\\d+)");

	private RedisInfo() {
	}

	/** EVAL and EVALSHA calls Redis has run since it started (or since CONFIG RESETSTAT). */
	static long scriptCalls(int port) {
		Matcher calls = CALLS.matcher(info(port, "commandstats"));
		long sum = 0;
		while (calls.find()) {
			sum += Long.parseLong(calls.group(2));
		}
		return sum;
	}

	/**
	 * Waits until Redis has run no script call for {@code quietMillis} (a backlog drained), at most
	 * {@code maxMillis}, and returns the calls then.
	 */
	static long scriptCallsOnceQuiet(int port, long quietMillis, long maxMillis) {
		long deadline = System.currentTimeMillis() + maxMillis;
		long calls = scriptCalls(port);
		while (System.currentTimeMillis() < deadline) {
			GatewayJar.sleep(quietMillis);
			long now = scriptCalls(port);
			if (now == calls) {
				return now;
			}
			calls = now;
		}
		return calls;
	}

	/** Waits until at least {@code clients} connections besides the asking one are open, at most {@code maxMillis}. */
	static void awaitClients(int port, int clients, long maxMillis) {
		long deadline = System.currentTimeMillis() + maxMillis;
		while (System.currentTimeMillis() < deadline) {
			if (clients(port) >= clients) {
				return;
			}
			GatewayJar.sleep(50);
		}
		throw new IllegalStateException("No " + clients + " client(s) reconnected to Redis on " + port + " within "
				+ maxMillis + " ms");
	}

	/** The connections open besides the asking one. */
	static long clients(int port) {
		Matcher connected = Pattern.compile("connected_clients:(\\d+)").matcher(info(port, "clients"));
		if (!connected.find()) {
			throw new IllegalStateException("No connected_clients in INFO clients of Redis on " + port);
		}
		return Long.parseLong(connected.group(1)) - 1;
	}

	static long usedMemory(int port) {
		Matcher used = Pattern.compile("used_memory:(\\d+)").matcher(info(port, "memory"));
		if (!used.find()) {
			throw new IllegalStateException("No used_memory in INFO memory of Redis on " + port);
		}
		return Long.parseLong(used.group(1));
	}

	private static String info(int port, String section) {
		try (Socket socket = new Socket("127.0.0.1", port)) {
			socket.setSoTimeout(5_000);
			socket.getOutputStream().write(("INFO " + section + "\r\nQUIT\r\n").getBytes(StandardCharsets.US_ASCII));
			return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("INFO " + section + " of Redis on " + port, ex);
		}
	}

}
