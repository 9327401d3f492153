package io.windowlimiter.metering;

import java.nio.ByteBuffer;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * Reads the usage of one LLM response from its body as it passes to the client, never buffering it: a
 * JSON body (OpenAI chat completions or Responses API, Anthropic messages) or an SSE stream (chat
 * completions chunks with {@code stream_options.include_usage}, the Responses API's
 * {@code response.completed}, Anthropic's {@code message_start} and {@code message_delta}). Which of the
 * two is told by the body's first byte (an opening brace or bracket: JSON), so it needs no headers.
 * <p>
 * One meter per response, made at admission: {@link #pass(ByteBuffer, Output)} each slice of the body in
 * order (slices may split a line, a UTF-8 character, anything), {@link #finish()} when the body completes, and
 * {@link #usage()} or {@link #charge(int)} once it has ended, completed or cancelled.
 * <p>
 * Memory is bounded whatever the stream's length: about 1.5 KB of fixed state (one scanner: a stream's, or a
 * JSON body's made when the body turns out to be JSON), up to {@value SseScanner#MAX_CARRIED_BYTES} bytes of
 * an event a slice cut (read whole when the next slice completes it) and {@value EventSkim#MAX_RETAINED_BYTES}
 * of the prefix and end its events share, plus, when stripping, at most {@value #MAX_HELD_EVENT_BYTES} bytes of one
 * event held until its end. Thread-safe: a cancel may ask for the
 * usage while a slice is being read.
 */
public final class UsageMeter {

	/**
	 * When stripping, an event is held until its end (so the usage-only chunk can be dropped whole); one
	 * longer than this cannot be that chunk (a few hundred bytes) and is passed on as it comes.
	 */
	public static final int MAX_HELD_EVENT_BYTES = 16 * 1024;

	/**
	 * What a meter keeps at most, however long the body: an event held, one carried to the next slice, and
	 * the prefix and end its events share.
	 */
	public static final int MAX_RETAINED_BYTES = MAX_HELD_EVENT_BYTES + SseScanner.MAX_CARRIED_BYTES
			+ EventSkim.MAX_RETAINED_BYTES;

	private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

	private static final byte[] NO_BYTES = new byte[0];

	/** A direct slice is read in copies of at most this many bytes. */
	private static final int MAX_COPY_BYTES = 64 * 1024;

	/**
	 * The thread's array a direct slice is copied into to be read, kept by the thread (an event loop), not
	 * the stream: an open stream keeps no copy.
	 */
	private static final ThreadLocal<byte[]> COPIES = ThreadLocal.withInitial(() -> new byte[8 * 1024]);

	private enum Body {

		UNKNOWN, JSON, SSE

	}

	private final long reservedTokens;

	private final boolean stripUsageChunk;

	private final UsageFigures sum = new UsageFigures();

	private final SseScanner sse;

	/** A JSON body's scanner, made at its first byte: a stream, the usual body, never needs it (about 1.4 KB). */
	private @Nullable JsonScanner json;

	private Body body = Body.UNKNOWN;

	/** Bytes of an unfinished event held back from the client (stripping only). */
	private final EventBytes held = new EventBytes(MAX_HELD_EVENT_BYTES);

	/**
	 * The unfinished event is passed on as it comes: it is longer than {@link #MAX_HELD_EVENT_BYTES}, or it
	 * cannot be the usage-only chunk: the event before it was a choice's chunk that did not finish it (OpenAI
	 * sends usage once every choice finished), or its first bytes open a choice.
	 */
	private boolean passing;

	/** The last event was dropped: the LF of its CRLF goes too. */
	private boolean droppedLast;

	/**
	 * @param reservedTokens what admission reserved for this response, charged when it reports no usage
	 * @param stripUsageChunk drop OpenAI's usage-only chunk from the stream: the gateway asked for it, the
	 * client did not ({@link LlmRequest#needsIncludeUsage()})
	 */
	public UsageMeter(long reservedTokens, boolean stripUsageChunk) {
		this(reservedTokens, stripUsageChunk, true);
	}

	private UsageMeter(long reservedTokens, boolean stripUsageChunk, boolean skimming) {
		this.reservedTokens = reservedTokens;
		this.stripUsageChunk = stripUsageChunk;
		this.sse = new SseScanner(this.sum, skimming);
	}

	/** A meter whose stream reads every event by the full scan: the reference its cheap path is tested against. */
	static UsageMeter fullScanOnly(long reservedTokens, boolean stripUsageChunk) {
		return new UsageMeter(reservedTokens, stripUsageChunk, false);
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
	 * Where the bytes a slice lets through go, in order: ranges of the slice itself, and bytes of earlier
	 * slices held back until their event ended.
	 */
	public interface Output {

		/** Bytes held back from earlier slices, let through now: valid only during this call. */
		void held(byte[] bytes, int offset, int length);

		/** The slice's bytes {@code from} (inclusive) to {@code to}, counted from its position. */
		void slice(int from, int to);

	}

	/**
	 * Reads the next slice of the body, from its position to its limit, leaving both untouched, and tells
	 * {@code output} what to send the client now: the whole slice unless stripping withholds or drops bytes.
	 */
	public synchronized void pass(ByteBuffer slice, Output output) {
		int length = slice.remaining();
		if (length == 0) {
			return;
		}
		if (!this.stripUsageChunk) {
			read(slice);
			output.slice(0, length);
			return;
		}
		if (slice.hasArray()) {
			strip(slice.array(), slice.arrayOffset() + slice.position(), length, output);
			return;
		}
		byte[] copy = length <= MAX_COPY_BYTES ? copies(length) : new byte[length];
		slice.duplicate().get(copy, 0, length);
		strip(copy, 0, length, output);
	}

	/**
	 * {@link #pass(ByteBuffer, Output)} returning what to send the client now: the slice itself unless
	 * stripping withholds or drops bytes, else a new buffer, perhaps empty.
	 */
	public ByteBuffer pass(ByteBuffer slice) {
		if (!slice.hasRemaining()) {
			return slice;
		}
		Passed passed = new Passed();
		pass(slice, passed);
		if (passed.isWhole(slice.remaining())) {
			return slice;
		}
		byte[] held = passed.held();
		int at = (held != null) ? held.length : 0;
		byte[] out = Arrays.copyOf((held != null) ? held : NO_BYTES, at + passed.rangeBytes());
		for (int k = 0; k < passed.ranges(); k++) {
			ByteBuffer range = passed.range(slice, k);
			int length = range.remaining();
			range.get(out, at, length);
			at += length;
		}
		return ByteBuffer.wrap(out);
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
		if (this.held.length() == 0) {
			return EMPTY;
		}
		return this.held.takeAll();
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
				figures.textBytes, Math.max(0, figures.cached));
	}

	/** The tokens to charge for this response ({@link Usage#charge(long, int)} with the reservation). */
	public long charge(int status) {
		return usage().charge(this.reservedTokens, status);
	}

	/** Bytes this meter holds back from the client now (at most {@link #MAX_HELD_EVENT_BYTES}). */
	public synchronized int heldBytes() {
		return this.held.length();
	}

	/** Whether this meter made the scanner of a whole JSON body (a stream's meter does not). */
	synchronized boolean scansJsonBody() {
		return this.json != null;
	}

	/** Bytes of buffers this meter keeps, whatever they hold: at most {@link #MAX_RETAINED_BYTES}. */
	public synchronized int retainedBytes() {
		return this.held.capacity() + this.sse.retainedBytes();
	}

	private void read(ByteBuffer slice) {
		if (slice.hasArray()) {
			scan(slice.array(), slice.arrayOffset() + slice.position(), slice.remaining(), SseScanner.NO_BOUNDARIES);
			return;
		}
		// a direct buffer (Netty's) is read from the thread's copy: an open stream keeps none between slices
		ByteBuffer source = slice.duplicate();
		while (source.hasRemaining()) {
			int count = Math.min(source.remaining(), MAX_COPY_BYTES);
			byte[] copy = copies(count);
			source.get(copy, 0, count);
			scan(copy, 0, count, SseScanner.NO_BOUNDARIES);
		}
	}

	/** The thread's copy array, at least {@code length} (at most {@link #MAX_COPY_BYTES}) long. */
	private static byte[] copies(int length) {
		byte[] copy = COPIES.get();
		if (copy.length < length) {
			copy = new byte[Math.max(length, Math.min(copy.length * 2, MAX_COPY_BYTES))];
			COPIES.set(copy);
		}
		return copy;
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

	private void strip(byte[] bytes, int offset, int length, Output output) {
		Stripping stripping = new Stripping(bytes, offset, output);
		scan(bytes, offset, length, stripping);
		int tail = offset + length;
		if (this.sse.inEvent() && !this.passing) {
			if (this.held.length() + tail - stripping.from > MAX_HELD_EVENT_BYTES
					|| this.sse.unfinishedEventIsNotUsageChunk()) {
				stripping.emitHeld();
				stripping.emit(stripping.from, tail);
				this.passing = true;
			}
			else {
				this.held.add(bytes, stripping.from, tail - stripping.from);
			}
		}
		else {
			stripping.emit(stripping.from, tail);
		}
		stripping.flush();
	}

	/**
	 * Tells the output what one slice sends the client: bytes between events at once, each event whole once it
	 * ends, except the usage-only chunk; adjacent ranges of the slice told as one.
	 */
	private final class Stripping implements SseScanner.Boundaries {

		private final byte[] bytes;

		private final int offset;

		private final Output output;

		/** The first byte of the slice not yet sent, held or dropped. */
		int from;

		/** A range of the slice to send, not yet told (-1: none). */
		private int rangeFrom = -1;

		private int rangeTo;

		Stripping(byte[] bytes, int offset, Output output) {
			this.bytes = bytes;
			this.offset = offset;
			this.from = offset;
			this.output = output;
		}

		@Override
		public void eventStart(int index) {
			emit(this.from, index);
		}

		@Override
		public void eventEnd(int index, boolean usageOnly) {
			if (UsageMeter.this.passing) {
				UsageMeter.this.passing = false;
				UsageMeter.this.droppedLast = false;
				emit(this.from, index);
				return;
			}
			UsageMeter.this.droppedLast = usageOnly;
			if (usageOnly) {
				UsageMeter.this.held.clear();
				this.from = index;
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
			}
		}

		void emitHeld() {
			EventBytes held = UsageMeter.this.held;
			if (held.length() > 0) {
				flush();
				this.output.held(held.bytes(), 0, held.length());
				held.clear();
			}
		}

		void emit(int start, int end) {
			if (end > start) {
				if (this.rangeFrom >= 0 && this.rangeTo == start) {
					this.rangeTo = end;
				}
				else {
					flush();
					this.rangeFrom = start;
					this.rangeTo = end;
				}
			}
			this.from = end;
		}

		void flush() {
			if (this.rangeFrom >= 0) {
				this.output.slice(this.rangeFrom - this.offset, this.rangeTo - this.offset);
				this.rangeFrom = -1;
			}
		}

	}

	/**
	 * An {@link Output} that keeps what one slice lets through, for an adapter to send once the meter is done
	 * with the slice: the held bytes (copied) and the slice's ranges, in order.
	 */
	public static final class Passed implements Output {

		private byte @Nullable [] held;

		/** From and to of each range, two ints a range. */
		private int[] bounds = new int[2];

		private int boundsUsed;

		@Override
		public void held(byte[] bytes, int offset, int length) {
			int before = (this.held != null) ? this.held.length : 0;
			byte[] grown = (this.held != null) ? Arrays.copyOf(this.held, before + length) : new byte[length];
			System.arraycopy(bytes, offset, grown, before, length);
			this.held = grown;
		}

		@Override
		public void slice(int from, int to) {
			if (this.boundsUsed == this.bounds.length) {
				this.bounds = Arrays.copyOf(this.bounds, this.bounds.length * 2);
			}
			this.bounds[this.boundsUsed++] = from;
			this.bounds[this.boundsUsed++] = to;
		}

		/** Bytes of earlier slices to send before the ranges, or null. */
		public byte @Nullable [] held() {
			return this.held;
		}

		/** How many ranges of the slice to send. */
		public int ranges() {
			return this.boundsUsed / 2;
		}

		/** Where range {@code k} starts, counted from the slice's position. */
		public int from(int k) {
			return this.bounds[2 * k];
		}

		/** Where range {@code k} ends (exclusive). */
		public int to(int k) {
			return this.bounds[2 * k + 1];
		}

		/** Range {@code k} of {@code slice} (the slice this collected for), as a view of its bytes. */
		public ByteBuffer range(ByteBuffer slice, int k) {
			return slice.duplicate().limit(slice.position() + to(k)).position(slice.position() + from(k));
		}

		/** Bytes of the slice to send, over all ranges. */
		public int rangeBytes() {
			int bytes = 0;
			for (int k = 0; k < ranges(); k++) {
				bytes += to(k) - from(k);
			}
			return bytes;
		}

		/** What passes is the slice of {@code length} bytes as it came: no held bytes, one range over it all. */
		public boolean isWhole(int length) {
			return this.held == null && ranges() == 1 && from(0) == 0 && to(0) == length;
		}

	}

}
