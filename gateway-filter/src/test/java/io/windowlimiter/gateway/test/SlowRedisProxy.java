package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A TCP proxy in front of a real Redis that holds each of Redis's replies for a set time before passing it on:
 * a Redis that answers every command, in order, but only just under the limiter's timeout (what a busy or
 * distant Redis looks like, which a frozen one or {@code DEBUG SLEEP} cannot show: they answer nobody meanwhile).
 * Requests go through at once. The delay can be changed while connections are open.
 */
public final class SlowRedisProxy implements AutoCloseable {

	private final ServerSocket server;

	private final int redisPort;

	private volatile long delayNanos;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private SlowRedisProxy(int redisPort) throws IOException {
		this.redisPort = redisPort;
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread acceptor = new Thread(this::accept, "slow-redis-proxy");
		acceptor.setDaemon(true);
		acceptor.start();
	}

	public static SlowRedisProxy to(int redisPort) {
		try {
			return new SlowRedisProxy(redisPort);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	public int port() {
		return this.server.getLocalPort();
	}

	/** From now on each reply is passed on this long after it came from Redis. */
	public void delay(Duration delay) {
		this.delayNanos = delay.toNanos();
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				client.setTcpNoDelay(true);
				Socket redis = new Socket(InetAddress.getLoopbackAddress(), this.redisPort);
				redis.setTcpNoDelay(true);
				this.sockets.add(client);
				this.sockets.add(redis);
				pump(client.getInputStream(), redis.getOutputStream(), false);
				pump(redis.getInputStream(), client.getOutputStream(), true);
			}
			catch (IOException ex) {
				// closed
			}
		}
	}

	/**
	 * Copies one direction. Replies are read as they come, each stamped with when it is due, and written by a
	 * thread of their own when due: each is held the delay from its own arrival, not after the one before it.
	 */
	private void pump(InputStream from, OutputStream to, boolean delayed) {
		BlockingQueue<Object[]> due = new LinkedBlockingQueue<>();
		if (delayed) {
			daemon(() -> {
				try {
					while (true) {
						Object[] next = due.take();
						if (next.length == 0) {
							break;
						}
						long left;
						while ((left = (long) next[0] - System.nanoTime()) > 0) {
							Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
						}
						to.write((byte[]) next[1]);
						to.flush();
					}
				}
				catch (IOException | InterruptedException ex) {
					// a side closed
				}
				closeQuietly(to);
			});
		}
		daemon(() -> {
			byte[] buffer = new byte[64 * 1024];
			try {
				int read;
				while ((read = from.read(buffer)) >= 0) {
					byte[] chunk = Arrays.copyOf(buffer, read);
					if (delayed) {
						due.add(new Object[] { System.nanoTime() + this.delayNanos, chunk });
					}
					else {
						to.write(chunk);
						to.flush();
					}
				}
			}
			catch (IOException ex) {
				// a side closed
			}
			if (delayed) {
				due.add(new Object[0]);
			}
			else {
				closeQuietly(to);
			}
		});
	}

	private static void daemon(Runnable task) {
		Thread thread = new Thread(task, "slow-redis-proxy-pump");
		thread.setDaemon(true);
		thread.start();
	}

	private static void closeQuietly(OutputStream stream) {
		try {
			stream.close();
		}
		catch (IOException ex) {
			// closed already
		}
	}

	@Override
	public void close() {
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// closed already
		}
		for (Socket socket : this.sockets) {
			try {
				socket.close();
			}
			catch (IOException ex) {
				// closed already
			}
		}
	}

}
