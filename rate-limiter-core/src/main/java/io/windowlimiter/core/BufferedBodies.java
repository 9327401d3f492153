package io.windowlimiter.core;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The request-body bytes this instance buffers at once to meter LLM calls, across all connections and routes
 * ({@code window-rate-limiter.llm.max-buffered-bytes}). An LLM route reads a call's body before admitting it (the
 * estimate needs it); without a bound, many connections sending bodies that never end exhaust the heap (Server MVC)
 * or direct memory (WebFlux) of the whole gateway. Each request takes bytes as it buffers them through its own
 * {@link Lease}, and gives them all back when its body is released (admitted, refused, the client gone, an
 * error): a body that would take the total past the bound is refused at once (503), with nothing more read.
 */
public final class BufferedBodies {

	/** The gauge of the bytes buffered now, beside the limiter's other meters. */
	public static final String GAUGE = "gateway.ratelimit.llm.buffered";

	/** The gauge of the bound. */
	public static final String MAX_GAUGE = "gateway.ratelimit.llm.buffered.max";

	/** The Retry-After of a refusal: the bodies held now are usually read within a second. */
	public static final String RETRY_AFTER_SECONDS = "1";

	/** The default bound's share of the heap: 1/{@value}. */
	public static final int DEFAULT_HEAP_SHARE = 8;

	private final long max;

	private final AtomicLong buffered = new AtomicLong();

	/** @param max the most bytes buffered at once, at least 1 */
	public BufferedBodies(long max) {
		if (max < 1) {
			throw new IllegalArgumentException("max-buffered-bytes must be 1 or more, was " + max);
		}
		this.max = max;
	}

	/**
	 * The default bound: an eighth of the JVM's largest heap. A body is held twice for a moment while it is
	 * copied (WebFlux: from direct buffers to the heap; Server MVC: from chunks to one array), so an eighth
	 * leaves three quarters of the heap to the rest of the gateway; and WebFlux's direct memory defaults to the
	 * heap's size, so the same bound holds there.
	 */
	public static long defaultMax() {
		return Runtime.getRuntime().maxMemory() / DEFAULT_HEAP_SHARE;
	}

	/**
	 * The problem body (RFC 9457, as the route's 413) of a request refused because its body would take the budget
	 * past its bound, sent with 503 and {@code Retry-After: }{@value #RETRY_AFTER_SECONDS}: the instance is busy, the
	 * client did nothing wrong, and the OpenAI and Anthropic SDKs retry a 503 after the Retry-After.
	 */
	public String refusalProblem() {
		String detail = "This gateway instance is reading as many LLM request bodies as it holds at once (at most "
				+ this.max + " bytes together, max-buffered-bytes); retry shortly";
		return "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"detail\":"
				+ QuotaProblem.jsonString(detail) + ",\"max-buffered-bytes\":" + this.max + "}";
	}

	/** A lease for one request's body: take bytes as they are buffered, close it when the body is released. */
	public Lease lease() {
		return new Lease();
	}

	/**
	 * Whether {@code bytes} more would fit now: a body whose declared length would not is refused before a byte
	 * of it is read (nothing is taken: the bytes are counted as they come).
	 */
	public boolean fits(long bytes) {
		return this.buffered.get() + bytes <= this.max;
	}

	/** The bytes buffered now. */
	public long buffered() {
		return this.buffered.get();
	}

	/** The bound. */
	public long max() {
		return this.max;
	}

	private boolean tryTake(long bytes) {
		long now;
		do {
			now = this.buffered.get();
			if (now + bytes > this.max) {
				return false;
			}
		}
		while (!this.buffered.compareAndSet(now, now + bytes));
		return true;
	}

	/**
	 * The bytes one request's body holds of the budget. Closing it gives them back; it may be closed more than
	 * once, from any thread (the client gone while a buffer is taken), and takes nothing once closed.
	 */
	public final class Lease implements AutoCloseable {

		private long taken;

		private boolean closed;

		private Lease() {
		}

		/**
		 * Takes {@code bytes} more for this body.
		 * @return false, with nothing taken, when they would take the budget past its bound, or the lease is
		 * closed: the body must be refused, and read no further
		 */
		public synchronized boolean take(long bytes) {
			if (this.closed || !tryTake(bytes)) {
				return false;
			}
			this.taken += bytes;
			return true;
		}

		/** The bytes this body holds now. */
		public synchronized long taken() {
			return this.taken;
		}

		/** Gives back every byte this body took. */
		@Override
		public synchronized void close() {
			if (!this.closed) {
				this.closed = true;
				BufferedBodies.this.buffered.addAndGet(-this.taken);
				this.taken = 0;
			}
		}

	}

}
