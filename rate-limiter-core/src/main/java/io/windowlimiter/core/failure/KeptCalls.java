package io.windowlimiter.core.failure;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import reactor.core.publisher.Mono;

/**
 * What the guard sends once a node has answered a later call: the undo of a decision given up while its command
 * may still run (the release of the concurrency slots its script takes), and a call the node could not take (a
 * release, a settle) kept to send then ({@link RedisGuard#sendWhenAnswering}). Each goes once, through the
 * guard, and bounds, counts and swallows its own outcome.
 */
final class KeptCalls {

	private final AtomicLong undone = new AtomicLong();

	private final AtomicLong keptForLater = new AtomicLong();

	/** How many undos of given-up calls were sent since start. */
	long undos() {
		return this.undone.get();
	}

	/** How many calls were kept since start to send once Redis answered. */
	long keptForLater() {
		return this.keptForLater.get();
	}

	/**
	 * Keeps the call on the node until it answers a call sent after now; false when the node keeps {@code max}
	 * already.
	 */
	boolean keep(NodeProgress node, Mono<?> call, Mono<?> trialProbe, int max) {
		if (!node.keepForLater(call, trialProbe, max)) {
			return false;
		}
		this.keptForLater.incrementAndGet();
		return true;
	}

	/** Sends what undoes a given-up call, once; a call answered, or refused by Redis, has none to send. */
	void undo(PendingCall<?> givenUp) {
		Mono<?> undo = givenUp.ifGivenUp;
		if (undo != null && givenUp.undone.compareAndSet(false, true)) {
			this.undone.incrementAndGet();
			undo.subscribe(done -> {
			}, error -> {
			});
		}
	}

	/** Sends the calls kept for when their node answers, now due; each bounds, counts and swallows its own outcome. */
	void sendAll(List<Mono<?>> due) {
		for (Mono<?> later : due) {
			later.subscribe(done -> {
			}, error -> {
			});
		}
	}

}
