package io.windowlimiter.core.autoconfigure;

import io.windowlimiter.core.BufferedBodies;

import org.springframework.util.unit.DataSize;

/** Settings of LLM routes shared by all of them. */
public class LlmProperties {

	/**
	 * The most request-body bytes this instance buffers at once to meter LLM calls, all connections and
	 * routes together: a body is read (up to its route's max-body-bytes) before its call is admitted, and a
	 * body that would take the total past this is answered 503 with Retry-After: 1 at once, nothing charged.
	 * Unset, an eighth of the JVM's largest heap (-Xmx).
	 */
	private DataSize maxBufferedBytes;

	public DataSize getMaxBufferedBytes() {
		return this.maxBufferedBytes;
	}

	public void setMaxBufferedBytes(DataSize maxBufferedBytes) {
		this.maxBufferedBytes = maxBufferedBytes;
	}

	/** The bound in bytes: as set, else the default's. */
	public long maxBufferedBytes() {
		if (this.maxBufferedBytes == null) {
			return BufferedBodies.defaultMax();
		}
		if (this.maxBufferedBytes.toBytes() < 1) {
			throw new IllegalStateException(WindowRateLimiterProperties.PREFIX + ".llm.max-buffered-bytes is "
					+ this.maxBufferedBytes + "; it must be 1 byte or more (such as 64MB), or unset for an eighth of the heap");
		}
		return this.maxBufferedBytes.toBytes();
	}

}
