package io.windowlimiter.metering;

import java.nio.ByteBuffer;

/**
 * The bytes of one unfinished event kept between slices: an array that starts empty, grows to 512 bytes, then
 * doubles, never past its bound (the caller checks the bound before adding). Not thread-safe.
 */
final class EventBytes {

	private static final byte[] NONE = new byte[0];

	private final int max;

	private byte[] bytes = NONE;

	private int length;

	EventBytes(int max) {
		this.max = max;
	}

	byte[] bytes() {
		return this.bytes;
	}

	int length() {
		return this.length;
	}

	/** Bytes of the array kept, whatever it holds. */
	int capacity() {
		return this.bytes.length;
	}

	void add(byte[] source, int from, int count) {
		int needed = this.length + count;
		if (needed > this.bytes.length) {
			byte[] larger = new byte[Math.min(Math.max(needed, Math.max(512, this.bytes.length * 2)), this.max)];
			System.arraycopy(this.bytes, 0, larger, 0, this.length);
			this.bytes = larger;
		}
		System.arraycopy(source, from, this.bytes, this.length, count);
		this.length = needed;
	}

	void clear() {
		this.length = 0;
	}

	/** Hands the bytes over (the array is the caller's now) and starts again empty. */
	ByteBuffer takeAll() {
		ByteBuffer all = ByteBuffer.wrap(this.bytes, 0, this.length).slice();
		this.bytes = NONE;
		this.length = 0;
		return all;
	}

}
