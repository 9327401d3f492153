package io.windowlimiter.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import reactor.core.publisher.Mono;

/**
 * Holds requests of routes with a {@code max-delay} until their reserved slot, on Reactor's timer (no thread
 * waits), and bounds how many one instance holds at once ({@code window-rate-limiter.max-delayed}). A
 * request is given leave to be held before Redis decides it, so that no slot is reserved for a request
 * this instance could not hold: past the bound it is decided as if its route had no max-delay (passed now,
 * or refused with 429), still behind the slots others reserved.
 */
public final class HeldRequests {

	/**
	 * The default bound. Each held request keeps its connection, request and a timer task: some tens of KB
	 * (tens of MB at 1,000) and one file descriptor each, well within a gateway's defaults; and 1,000 held up
	 * to a second each already queues 1,000 requests per second of excess. More is rarely waiting, more
	 * often a flood better answered at once with 429 and Retry-After.
	 */
	public static final int DEFAULT_MAX = 1_000;

	/** The gauge of how many requests are held now, beside the limiter's other meters. */
	public static final String GAUGE = "gateway.ratelimit.held";

	private final int max;

	private final AtomicInteger held = new AtomicInteger();

	/** @param max how many requests this instance holds at once at most; 0 holds none */
	public HeldRequests(int max) {
		if (max < 0) {
			throw new IllegalArgumentException("max-delayed must be 0 or more, was " + max);
		}
		this.max = max;
	}

	/**
	 * Decides one request of a route that holds, and holds it as long as the admission says.
	 * @param decide decides the request; given whether it may be held (else it must be decided for now)
	 * @return the admission, once its hold is over; the leave to hold is returned when the hold ends, is
	 * cancelled (the client went away: its slot stays spent, see docs/max-delay.md) or fails
	 */
	public Mono<Admission> hold(Function<Boolean, Mono<Admission>> decide) {
		return Mono.defer(() -> {
			boolean leave = tryHold();
			Mono<Admission> held = decide.apply(leave)
				.delayUntil(admission -> (admission.delayMillis() > 0)
						? Mono.delay(Duration.ofMillis(admission.delayMillis())) : Mono.empty());
			return leave ? held.doFinally(signal -> this.held.decrementAndGet()) : held;
		});
	}

	/** How many requests are held, or waiting for Redis with leave to be held, now. */
	public int held() {
		return this.held.get();
	}

	/** The bound. */
	public int max() {
		return this.max;
	}

	private boolean tryHold() {
		int now;
		do {
			now = this.held.get();
			if (now >= this.max) {
				return false;
			}
		}
		while (!this.held.compareAndSet(now, now + 1));
		return true;
	}

}
