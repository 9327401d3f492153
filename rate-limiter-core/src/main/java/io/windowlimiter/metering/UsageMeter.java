package io.windowlimiter.metering;

import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * Reads the usage of one LLM response from its body as it passes to the client, never buffering it: a
 * JSON body (OpenAI chat completions or Responses API, Anthropic messages) or an SSE stream (chat
 * completions chunks with {@code stream_options.include_usage}, the Responses API's
 * {@code response.completed}, Anthropic's {@code message_start} and {@code message_delta}). Which of the
 * two is told by the body's first byte (an opening brace or bracket: JSON), so it needs no headers.
 * <p>
 * One meter per response, made at admission: {@link #pass(ByteBuffer)} each slice of the body in order
 * (slices may split a line, a UTF-8 character, anything), {@link #finish()} when the body completes, and
 * {@link #usage()} or {@link #charge(int)} once it has ended, completed or cancelled.
 * <p>
 * Memory is bounded whatever the stream's length: about 1.5 KB of fixed state (one scanner: a stream's, or a
 * JSON body's made when the body turns out to be JSON), plus, when
 * stripping, at most {@value #MAX_HELD_EVENT_BYTES} bytes of one event held until its end. Thread-safe: a
 * cancel may ask for the usage while a slice is being read.
 */
public final class UsageMeter {

	/**
	 * When stripping, an event is held until its end (so the usage-only chunk can be dropped whole); one
	 * longer than this cannot be that chunk (a few hundred bytes) and is passed on as it comes.
	 */
	public static final int MAX_HELD_EVENT_BYTES = 16 * 1024;

	private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

	/** A direct slice is read in copies of at most this many bytes. */
	private static final int MAX_COPY_BYTES = 64 * 1024;

	private enum Body {

		UNKNOWN, JSON, SSE

	}

	private final long reservedTokens;

	private final boolean stripUsageChunk;

	private final UsageFigures sum = new UsageFigures();

	private final SseScanner sse = new SseScanner(this.sum);

	/** A JSON body's scanner, made at its first byte: a stream, the usual body, never needs it (about 1.4 KB). */
	private @Nullable JsonScanner json;

	private Body body = Body.UNKNOWN;

	/** Bytes of an unfinished event held back from the client (stripping only). */
	private byte[] held = new byte[0];

	private int heldLength;

	/** The unfinished event is longer than {@link #MAX_HELD_EVENT_BYTES}: it is passed on as it comes. */
	private boolean passing;

	/** The last event was dropped: the LF of its CRLF goes too. */
	private boolean droppedLast;

	/**
	 * @param reservedTokens what admission reserved for this response, charged when it reports no usage
	 * @param stripUsageChunk drop OpenAI's usage-only chunk from the stream: the gateway asked for it, the
	 * client did not ({@link LlmRequest#needsIncludeUsage()})
	 */
	public UsageMeter(long reservedTokens, boolean stripUsageChunk) {
		this.reservedTokens = reservedTokens;
		this.stripUsageChunk = stripUsageChunk;
	}

	/** The meter for a request read at admission, its estimate reserved. */
	public static UsageMeter of(LlmRequest request, TokenEstimate estimate) {
		return new UsageMeter(estimate.tokens(), request.needsIncludeUsage());
	}

	public long reservedTokens() {
		return this.reservedTokens;
	}

	public boolean stripsUsageChunk() {
		return this.stripUsageChunk;
	}

	/**
	 * Reads the next slice of the body, from its position to its limit, leaving both untouched, and returns
	 * what to send the client now: the slice itself unless stripping withholds or drops bytes, else a new
	 * buffer, perhaps empty.
	 */
	public synchronized ByteBuffer pass(ByteBuffer slice) {
		if (!slice.hasRemaining()) {
			return slice;
		}
		if (!this.stripUsageChunk) {
			read(slice);
			return slice;
		}
		byte[] bytes;
		int offset;
		int length = slice.remaining();
		if (slice.hasArray()) {
			bytes = slice.array();
			offset = slice.arrayOffset() + slice.position();
		}
		else {
			bytes = new byte[length];
			slice.duplicate().get(bytes);
			offset = 0;
		}
		return strip(slice, bytes, offset, length);
	}

	/** {@link #pass(ByteBuffer)} for an array. */
	public ByteBuffer pass(byte[] bytes) {
		return pass(ByteBuffer.wrap(bytes));
	}

	/**
	 * The body completed: returns the bytes still held back (the last event when the upstream did not end
	 * it with a blank line), to send the client before completing. Not needed on cancel.
	 */
	public synchronized ByteBuffer finish() {
		if (this.json != null) {
			this.json.finish();
		}
		this.sse.finish();
		if (this.heldLength == 0) {
			return EMPTY;
		}
		ByteBuffer rest = ByteBuffer.wrap(this.held, 0, this.heldLength).slice();
		this.held = new byte[0];
		this.heldLength = 0;
		return rest;
	}

	/** The usage read so far; final once the body has ended. */
	public synchronized Usage usage() {
		UsageFigures figures = this.sum;
		Usage.Outcome outcome;
		if (figures.reported) {
			outcome = Usage.Outcome.REPORTED;
		}
		else if (figures.input >= 0 || figures.output >= 0 || figures.textBytes > 0) {
			outcome = Usage.Outcome.PARTIAL;
		}
		else {
			outcome = figures.error ? Usage.Outcome.ERROR : Usage.Outcome.NONE;
		}
		return new Usage(outcome, Math.max(0, figures.input), Math.max(0, figures.output),
				Math.max(0, figures.cacheCreation), Math.max(0, figures.cacheRead), Math.max(0, figures.total),
				figures.textBytes);
	}

	/** The tokens to charge for this response ({@link Usage#charge(long, int)} with the reservation). */
	public long charge(int status) {
		return usage().charge(this.reservedTokens, status);
	}

	/** Bytes this meter holds back from the client now (at most {@link #MAX_HELD_EVENT_BYTES}). */
	public synchronized int heldBytes() {
		return this.heldLength;
	}

	/** Whether this meter made the scanner of a whole JSON body (a stream's meter does not). */
	synchronized boolean scansJsonBody() {
		return this.json != null;
	}

	/** Bytes of buffers this meter keeps, whatever they hold: bounded, however long the body. */
	public synchronized int retainedBytes() {
		return this.held.length;
	}

	private void read(ByteBuffer slice) {
		if (slice.hasArray()) {
			scan(slice.array(), slice.arrayOffset() + slice.position(), slice.remaining(), NO_BOUNDARIES);
			return;
		}
		// a direct buffer (Netty's) is copied whole, not through a small kept buffer: the events whole in one
		// copy take the cheap path, and an open stream keeps no copy between slices
		ByteBuffer source = slice.duplicate();
		while (source.hasRemaining()) {
			byte[] copy = new byte[Math.min(source.remaining(), MAX_COPY_BYTES)];
			source.get(copy);
			scan(copy, 0, copy.length, NO_BOUNDARIES);
		}
	}

	private void scan(byte[] bytes, int offset, int length, SseScanner.Boundaries boundaries) {
		int start = offset;
		int end = offset + length;
		if (this.body == Body.UNKNOWN) {
			while (start < end && isLeadingByte(bytes[start])) {
				start++;
			}
			if (start == end) {
				return;
			}
			this.body = (bytes[start] == '{' || bytes[start] == '[') ? Body.JSON : Body.SSE;
			if (this.body == Body.JSON) {
				this.json = new JsonScanner(this.sum);
			}
		}
		if (this.json != null) {
			this.json.feed(bytes, start, end - start);
		}
		else {
			this.sse.feed(bytes, start, end - start, boundaries);
		}
	}

	/** Whitespace and a UTF-8 byte order mark before the body's first byte. */
	private static boolean isLeadingByte(byte b) {
		return b == ' ' || b == '\n' || b == '\r' || b == '\t' || b == (byte) 0xEF || b == (byte) 0xBB
				|| b == (byte) 0xBF;
	}

	private ByteBuffer strip(ByteBuffer slice, byte[] bytes, int offset, int length) {
		Stripping stripping = new Stripping(bytes, offset, length, this.heldLength);
		scan(bytes, offset, length, stripping);
		int tail = offset + length;
		if (this.sse.inEvent() && !this.passing) {
			if (this.heldLength + tail - stripping.from > MAX_HELD_EVENT_BYTES) {
				stripping.emitHeld();
				stripping.emit(stripping.from, tail);
				this.passing = true;
			}
			else {
				hold(bytes, stripping.from, tail - stripping.from);
			}
		}
		else {
			stripping.emit(stripping.from, tail);
		}
		if (!stripping.changed && this.heldLength == 0) {
			return slice;
		}
		return ByteBuffer.wrap(stripping.out, 0, stripping.outLength).slice();
	}

	private void hold(byte[] bytes, int from, int count) {
		if (count == 0) {
			return;
		}
		int needed = this.heldLength + count;
		if (needed > this.held.length) {
			byte[] larger = new byte[Math.min(Math.max(Math.max(needed, 512), this.held.length * 2),
					MAX_HELD_EVENT_BYTES)];
			System.arraycopy(this.held, 0, larger, 0, this.heldLength);
			this.held = larger;
		}
		System.arraycopy(bytes, from, this.held, this.heldLength, count);
		this.heldLength = needed;
	}

	private static final SseScanner.Boundaries NO_BOUNDARIES = new SseScanner.Boundaries() {

		@Override
		public void eventStart(int index) {
		}

		@Override
		public void eventEnd(int index, boolean usageOnly) {
		}

	};

	/**
	 * Builds what one slice sends the client: bytes between events at once, each event whole once it ends,
	 * except the usage-only chunk.
	 */
	private final class Stripping implements SseScanner.Boundaries {

		private final byte[] bytes;

		final byte[] out;

		int outLength;

		/** The first byte of the slice not yet sent, held or dropped. */
		int from;

		/** What is sent differs from the slice as it came. */
		boolean changed;

		Stripping(byte[] bytes, int offset, int length, int heldBefore) {
			this.bytes = bytes;
			this.from = offset;
			this.out = new byte[length + heldBefore];
			this.changed = heldBefore > 0;
		}

		@Override
		public void eventStart(int index) {
			emit(this.from, index);
		}

		@Override
		public void eventEnd(int index, boolean usageOnly) {
			if (UsageMeter.this.passing) {
				UsageMeter.this.passing = false;
				emit(this.from, index);
				return;
			}
			UsageMeter.this.droppedLast = usageOnly;
			if (usageOnly) {
				UsageMeter.this.heldLength = 0;
				this.from = index;
				this.changed = true;
				return;
			}
			emitHeld();
			emit(this.from, index);
		}

		@Override
		public void lineFeedAfterEvent(int index) {
			if (UsageMeter.this.droppedLast) {
				emit(this.from, index);
				this.from = index + 1;
				this.changed = true;
			}
		}

		void emitHeld() {
			int count = UsageMeter.this.heldLength;
			if (count > 0) {
				System.arraycopy(UsageMeter.this.held, 0, this.out, this.outLength, count);
				this.outLength += count;
				UsageMeter.this.heldLength = 0;
			}
		}

		void emit(int start, int end) {
			int count = end - start;
			if (count > 0) {
				System.arraycopy(this.bytes, start, this.out, this.outLength, count);
				this.outLength += count;
			}
			this.from = end;
		}

	}

}
