package io.windowlimiter.metering;

/**
 * Reads a {@code text/event-stream} fed in slices of any size, without keeping its lines. An event that
 * cannot carry usage or an error (most of a stream) is read by byte searches alone ({@link EventSkim}): whole
 * in the slice, or, when a slice ends inside it, from a copy of its first bytes (at most
 * {@value #MAX_CARRIED_BYTES}) completed by the next slices. Any other event goes through the full scan: the
 * bytes of its {@code data} lines go straight into a {@link JsonScanner}, and when the event ends (a blank
 * line) the usage it carried is added to the response's. Only whole events count: one cut by the end of the
 * stream, or whose data is not JSON ({@code [DONE]}, a malformed line), adds nothing. Memory is bounded
 * whatever the length of a line, an event or the stream. Not thread-safe.
 */
final class SseScanner {

	/** Told where events start and end in the slice being fed, for a caller that drops some of them. */
	interface Boundaries {

		/** An event's first byte is at {@code index}. */
		void eventStart(int index);

		/** An event ended just before {@code index}; {@code usageOnly}: an OpenAI usage-only chunk. */
		void eventEnd(int index, boolean usageOnly);

		/** The LF at {@code index} completes the CRLF that ended the last event. */
		default void lineFeedAfterEvent(int index) {
		}

	}

	/** An event cut by a slice's end is carried to the next for the cheap path up to this length. */
	static final int MAX_CARRIED_BYTES = 4096;

	private static final byte[] DATA = { 'd', 'a', 't', 'a' };

	/** For a caller that drops nothing. */
	static final Boundaries NO_BOUNDARIES = new Boundaries() {

		@Override
		public void eventStart(int index) {
		}

		@Override
		public void eventEnd(int index, boolean usageOnly) {
		}

	};

	private static final byte[] LF = { '\n' };

	private static final byte[] DONE = { '[', 'D', 'O', 'N', 'E', ']' };

	private enum State {

		LINE_START, FIELD, VALUE_FIRST, VALUE

	}

	private final UsageFigures sum;

	private final UsageFigures event = new UsageFigures();

	private final JsonScanner json = new JsonScanner(this.event);

	private final EventSkim skim = new EventSkim();

	private State state = State.LINE_START;

	/** The field name's first bytes matched "data" so far (-1: it is another field). */
	private int fieldMatched;

	private boolean inEvent;

	private int dataLines;

	/** How many bytes of this event's data matched "[DONE]" so far (-1: not it). */
	private int doneMatched;

	/** A CR ended the last line: a LF right after it belongs to the same line end. */
	private boolean afterCr;

	/** That CR was the blank line ending an event. */
	private boolean crEndedEvent;

	private boolean done;

	/** The last event that ended was a chat completions chunk of a choice that goes on ({@link EventSkim#choiceGoesOn}). */
	private boolean lastChoiceGoesOn;

	/** The first bytes of an event the cheap path waits to see whole; its start was told already. */
	private final EventBytes carried = new EventBytes(MAX_CARRIED_BYTES);

	/** False: every event goes through the full scan (the reference the cheap path is tested against). */
	private final boolean skimming;

	SseScanner(UsageFigures sum) {
		this(sum, true);
	}

	SseScanner(UsageFigures sum, boolean skimming) {
		this.sum = sum;
		this.skimming = skimming;
	}

	/** The stream sent OpenAI's {@code data: [DONE]}. */
	boolean done() {
		return this.done;
	}

	/** An event has started and not ended. */
	boolean inEvent() {
		return this.inEvent || this.carried.length() > 0;
	}

	/**
	 * An event has started that cannot be OpenAI's usage-only chunk, so a stripping meter need not hold it back:
	 * the event before it was a chat completions chunk of a choice that goes on (the usage chunk comes once every
	 * choice has finished), or its first bytes open its top-level {@code choices} array with an element, as the
	 * events before it did (the usage chunk's are empty). False when not known.
	 */
	boolean unfinishedEventIsNotUsageChunk() {
		return inEvent() && (this.lastChoiceGoesOn
				|| (this.carried.length() > 0 && this.skim.opensChoices(this.carried.bytes(), this.carried.length())));
	}

	/** Bytes of the buffers this scanner keeps: a carried event's and the cheap path's prefix. */
	int retainedBytes() {
		return this.carried.capacity() + this.skim.retainedBytes();
	}

	void feed(byte[] bytes, int offset, int length, Boundaries boundaries) {
		int end = offset + length;
		int i = offset;
		if (this.carried.length() > 0) {
			i = completeCarried(bytes, offset, end, boundaries);
		}
		scan(bytes, i, end, boundaries, this.skimming);
	}

	private void scan(byte[] bytes, int offset, int end, Boundaries boundaries, boolean skim) {
		int i = offset;
		while (i < end) {
			byte b = bytes[i];
			if (this.afterCr) {
				this.afterCr = false;
				if (b == '\n') {
					if (this.crEndedEvent) {
						boundaries.lineFeedAfterEvent(i);
					}
					this.crEndedEvent = false;
					i++;
					continue;
				}
			}
			this.crEndedEvent = false;
			boolean eol = b == '\n' || b == '\r';
			switch (this.state) {
				case LINE_START -> {
					if (eol) {
						endOfLine(b);
						if (this.inEvent) {
							dispatch(i + 1, boundaries);
							this.crEndedEvent = b == '\r';
						}
					}
					else {
						if (!this.inEvent) {
							if (skim && this.skim.read(bytes, i, end)) {
								i = skimmed(bytes, i, boundaries);
								continue;
							}
							if (skim && this.skim.incomplete && end - i <= MAX_CARRIED_BYTES) {
								boundaries.eventStart(i);
								this.carried.add(bytes, i, end - i);
								return;
							}
							this.inEvent = true;
							boundaries.eventStart(i);
						}
						this.state = State.FIELD;
						this.fieldMatched = 0;
						fieldByte(b);
					}
				}
				case FIELD -> {
					if (eol) {
						endOfLine(b);
						// a field without a colon has an empty value: "data" alone is an empty data line
						if (this.fieldMatched == DATA.length) {
							startDataLine();
						}
					}
					else if (b == ':') {
						this.state = State.VALUE_FIRST;
						if (this.fieldMatched == DATA.length) {
							startDataLine();
						}
					}
					else {
						fieldByte(b);
					}
				}
				case VALUE_FIRST, VALUE -> {
					if (eol) {
						endOfLine(b);
					}
					else if (b == ' ' && this.state == State.VALUE_FIRST) {
						this.state = State.VALUE;
					}
					else {
						this.state = State.VALUE;
						int run = i;
						while (run < end && bytes[run] != '\n' && bytes[run] != '\r') {
							run++;
						}
						if (this.fieldMatched == DATA.length) {
							this.json.feed(bytes, i, run - i);
							noteDone(bytes, i, run - i);
						}
						i = run;
						continue;
					}
				}
			}
			i++;
		}
	}

	/**
	 * An event {@link EventSkim} read whole, at the index it started: told as the full scan would, its
	 * blank line handled as at {@link #dispatch}; returns the index after that line's CR or LF.
	 */
	private int skimmed(byte[] bytes, int start, Boundaries boundaries) {
		boundaries.eventStart(start);
		return skimmedTo(bytes, this.skim.blankLine, boundaries);
	}

	/**
	 * The event {@link EventSkim} read last, whose blank line's CR or LF is at {@code blank} of {@code bytes}:
	 * its text and {@code [DONE]} added, its end told; returns the index after that CR or LF.
	 */
	private int skimmedTo(byte[] bytes, int blank, Boundaries boundaries) {
		this.sum.textBytes += this.skim.textBytes;
		this.done |= this.skim.done;
		this.lastChoiceGoesOn = this.skim.choiceGoesOn;
		boundaries.eventEnd(blank + 1, false);
		endOfLine(bytes[blank]);
		this.crEndedEvent = this.afterCr;
		return blank + 1;
	}

	/**
	 * The slice after a carried event's first bytes: adds its bytes to the copy, a few hundred at a time,
	 * until the cheap path reads the event whole (then told as {@link #skimmed} tells it), the slice is used
	 * up (the event goes on in the next), or the cheap path declines it or it grows too long: then its first
	 * bytes go through the full scan, the slice's after them. Returns where the slice is to be scanned from.
	 */
	private int completeCarried(byte[] bytes, int offset, int end, Boundaries boundaries) {
		EventBytes carried = this.carried;
		int head = carried.length();
		int taken = 0;
		int step = 256;
		while (true) {
			int take = Math.min(Math.min(step, end - offset - taken), MAX_CARRIED_BYTES - carried.length());
			carried.add(bytes, offset + taken, take);
			taken += take;
			if (this.skim.read(carried.bytes(), 0, carried.length()) && this.skim.blankLine >= head) {
				carried.clear();
				return skimmedTo(bytes, offset + this.skim.blankLine - head, boundaries);
			}
			boolean waiting = this.skim.incomplete && carried.length() < MAX_CARRIED_BYTES;
			if (waiting && offset + taken == end) {
				return end;
			}
			if (!waiting) {
				// its start was told when it was carried: the full scan picks it up without telling it again
				carried.clear();
				scan(carried.bytes(), 0, head, NO_BOUNDARIES, false);
				return offset;
			}
			step *= 2;
		}
	}

	/** The stream ends: an event without its blank line is incomplete and adds nothing. */
	void finish() {
		this.inEvent = false;
		this.carried.clear();
	}

	private void fieldByte(byte b) {
		if (this.fieldMatched >= 0 && this.fieldMatched < DATA.length && DATA[this.fieldMatched] == b) {
			this.fieldMatched++;
		}
		else {
			this.fieldMatched = -1;
		}
	}

	/** The colon of a data line: a second data line of an event joins the first with a LF. */
	private void startDataLine() {
		if (this.dataLines > 0) {
			this.json.feed(LF, 0, 1);
		}
		this.dataLines++;
		this.doneMatched = 0;
	}

	private void noteDone(byte[] bytes, int offset, int length) {
		for (int i = offset; i < offset + length && this.doneMatched >= 0; i++) {
			if (this.doneMatched < DONE.length && bytes[i] == DONE[this.doneMatched]) {
				this.doneMatched++;
			}
			else {
				this.doneMatched = -1;
			}
		}
	}

	private void endOfLine(byte b) {
		this.state = State.LINE_START;
		this.afterCr = b == '\r';
	}

	private void dispatch(int end, Boundaries boundaries) {
		boolean usageOnly = false;
		if (this.dataLines > 0) {
			this.json.finish();
			if (this.json.complete()) {
				this.event.addTo(this.sum);
				usageOnly = this.event.usageOnlyChunk();
			}
			else if (this.dataLines == 1 && this.doneMatched == DONE.length) {
				this.done = true;
			}
		}
		this.inEvent = false;
		this.lastChoiceGoesOn = false;
		this.dataLines = 0;
		this.json.reset();
		this.event.clear();
		boundaries.eventEnd(end, usageOnly);
	}

}
