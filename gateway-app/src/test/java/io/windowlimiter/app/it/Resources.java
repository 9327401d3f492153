package io.windowlimiter.app.it;

/** What the jar tests start around a gateway, closed when a test class or test ends. */
final class Resources {

	private Resources() {
	}

	/**
	 * Closes each in the order given (the gateway before the servers it talks to), skipping what never started
	 * (null); one that fails to close does not keep the rest open: the first failure is thrown at the end.
	 */
	static void close(AutoCloseable... inOrder) throws Exception {
		Exception first = null;
		for (AutoCloseable resource : inOrder) {
			if (resource == null) {
				continue;
			}
			try {
				resource.close();
			}
			catch (Exception ex) {
				if (first == null) {
					first = ex;
				}
				else {
					first.addSuppressed(ex);
				}
			}
		}
		if (first != null) {
			throw first;
		}
	}

}
