package io.windowlimiter.app.it;

import java.io.IOException;
import java.net.ServerSocket;

final class Ports {

	private Ports() {
	}

	/** A loopback port that was free a moment ago. */
	static int free() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
