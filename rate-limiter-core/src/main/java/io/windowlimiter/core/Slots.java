package io.windowlimiter.core;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;

/**
 * The concurrency slots one admitted request holds (its route's {@code algorithm: concurrency} limits) until
 * its response ends: in Redis, or in this instance's memory when fail-mode {@code local} admitted it. The
 * adapter releases them once the response has ended, whichever way (completed, failed, the client gone).
 * Released at most once: a second {@link #release()} sends nothing.
 */
public final class Slots {

	private final Supplier<Mono<?>> release;

	private final AtomicBoolean released = new AtomicBoolean();

	Slots(Supplier<Mono<?>> release) {
		this.release = release;
	}

	/**
	 * Gives the slots back: one Redis call through the guard (one Redis cannot take now is kept and sent once more
	 * when it answers again; one dropped beyond that expires after its window), or a count in memory. Never fails.
	 */
	public Mono<Void> release() {
		if (!this.released.compareAndSet(false, true)) {
			return Mono.empty();
		}
		return Mono.defer(this.release).onErrorResume(error -> Mono.empty()).then();
	}

	/** Whether {@link #release()} was called. */
	public boolean released() {
		return this.released.get();
	}

}
