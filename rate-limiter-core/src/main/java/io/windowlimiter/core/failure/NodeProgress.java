package io.windowlimiter.core.failure;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * What the guard knows of one Redis node's progress: when it last answered, whether it is stalled or down, the
 * places its calls hold (bounded per node), the given-up calls whose effect is undone once it answers a later
 * call, and the calls kept to send then.
 */
final class NodeProgress {

	final Object id;

	/** When the node last answered a decision (a result or an error reply), in {@link System#nanoTime()}. */
	volatile long lastReply = System.nanoTime();

	volatile boolean stalled;

	/** Whether its connection was last seen down (then it is stalled too). */
	volatile boolean down;

	/** Decisions waiting on this node: bounded per node, so one frozen master cannot take the others' room. */
	final AtomicInteger inFlight = new AtomicInteger();

	final AtomicBoolean trial = new AtomicBoolean();

	/** While stalled, no trial before this time: a lone client's every request would wait otherwise. */
	volatile long nextTrial = System.nanoTime();

	/** Numbers the calls sent to the node in the order they go; it answers them in that order. */
	final AtomicLong sent = new AtomicLong();

	/** Places in {@link #inFlight} kept for decisions given up with no reply (their commands may yet run). */
	private int givenUp;

	/** The number of the latest call among {@link #givenUp}. */
	private long lastGivenUp;

	private volatile boolean keepsGivenUp;

	/** Given-up calls whose effect is undone once the node answers a later call: at most its kept places. */
	private final List<PendingCall<?>> toUndo = new ArrayList<>();

	/** The probe the watchdog sends while places are kept (one of a given-up call's). */
	private @Nullable Mono<?> probe;

	/** Calls the node could not take, each sent once it answers a call sent after it was kept. */
	private final List<Later> later = new ArrayList<>();

	private volatile boolean keepsLater;

	NodeProgress(Object id) {
		this.id = id;
	}

	/**
	 * Counts one more decision in flight unless {@code max} wait already. Never above {@code max}, also not for
	 * an instant: an increment undone when over would show {@code max + 1} to {@link RedisGuard#inFlight()} (measured).
	 */
	boolean admit(int max) {
		int now;
		do {
			now = this.inFlight.get();
			if (now >= max) {
				return false;
			}
		}
		while (!this.inFlight.compareAndSet(now, now + 1));
		return true;
	}

	boolean keepsGivenUp() {
		return this.keepsGivenUp;
	}

	/**
	 * Keeps the place of a call given up with no reply, and what undoes it, if anything: both wait for a reply
	 * to a call sent after it.
	 * @param undo the given-up call whose effect is undone then; null when it has nothing to undo
	 * @param probe a call that changes nothing on this node, for the watchdog's trials while undos wait; null for none
	 */
	synchronized void keepForGivenUp(long sent, @Nullable PendingCall<?> undo, @Nullable Mono<?> probe) {
		this.givenUp++;
		this.lastGivenUp = Math.max(this.lastGivenUp, sent);
		if (undo != null) {
			this.toUndo.add(undo);
		}
		if (undo != null && probe != null) {
			this.probe = probe;
		}
		this.keepsGivenUp = true;
	}

	/**
	 * A reply to the call numbered {@code sent}: a node answers in the order it was sent to, so the given-up
	 * calls sent before it were answered or never written, and their places come back. (Two event loops may
	 * write in the other order than they numbered: a place then comes back a reply early.)
	 * @return the given-up calls sent before it whose effect is to be undone now (their commands have run, or
	 * never will)
	 */
	List<PendingCall<?>> answered(long sent) {
		if (!this.keepsGivenUp) {
			return List.of();
		}
		synchronized (this) {
			List<PendingCall<?>> due = List.of();
			if (!this.toUndo.isEmpty()) {
				due = new ArrayList<>();
				for (Iterator<PendingCall<?>> kept = this.toUndo.iterator(); kept.hasNext();) {
					PendingCall<?> undo = kept.next();
					if (undo.sent < sent) {
						due.add(undo);
						kept.remove();
					}
				}
			}
			if (this.givenUp > 0 && sent > this.lastGivenUp) {
				this.inFlight.addAndGet(-this.givenUp);
				this.givenUp = 0;
				this.keepsGivenUp = false;
				if (this.later.isEmpty()) {
					// the watchdog's trials go on while calls kept for later wait
					this.probe = null;
				}
			}
			return due;
		}
	}

	/**
	 * A call that changes nothing on this node, for the watchdog's trial while undos of given-up calls wait for
	 * a reply; null for none. (Places alone wait for the next reply, or a probe once they fill the node's room:
	 * a client that left mid-decision costs Redis nothing more.)
	 */
	synchronized @Nullable Mono<?> probeWhileKept() {
		return (this.toUndo.isEmpty() && this.later.isEmpty()) ? null : this.probe;
	}

	boolean keepsLater() {
		return this.keepsLater;
	}

	/**
	 * Keeps a call to send once the node answers a call sent after now; false when {@code max} are kept.
	 * Numbered by the calls sent so far: a reply to one of those may be on its way, and says nothing of now.
	 */
	synchronized boolean keepForLater(Mono<?> call, Mono<?> probe, int max) {
		if (this.later.size() >= max) {
			return false;
		}
		this.later.add(new Later(this.sent.get(), call));
		this.probe = probe;
		this.keepsLater = true;
		return true;
	}

	/** The kept calls due now that the node answered the call numbered {@code sent}: those kept before it. */
	List<Mono<?>> dueLater(long sent) {
		if (!this.keepsLater) {
			return List.of();
		}
		synchronized (this) {
			List<Mono<?>> due = new ArrayList<>();
			for (Iterator<Later> kept = this.later.iterator(); kept.hasNext();) {
				Later call = kept.next();
				if (call.after < sent) {
					due.add(call.call);
					kept.remove();
				}
			}
			this.keepsLater = !this.later.isEmpty();
			return due;
		}
	}

	/** Every kept call: the node is forgotten, they go where their keys live now. */
	synchronized List<Mono<?>> retireLater() {
		List<Mono<?>> due = new ArrayList<>();
		this.later.forEach(call -> due.add(call.call));
		this.later.clear();
		this.keepsLater = false;
		return due;
	}

	/**
	 * Forgets what this node kept: it is no longer a master the client routes to (failed over, removed).
	 * @return the given-up calls whose effect is to be undone (sent where their keys live now)
	 */
	synchronized List<PendingCall<?>> retire() {
		List<PendingCall<?>> due = new ArrayList<>(this.toUndo);
		this.toUndo.clear();
		this.givenUp = 0;
		this.keepsGivenUp = false;
		this.probe = null;
		this.stalled = false;
		return due;
	}

	String described() {
		return (this.id == RedisGuard.ONE_NODE) ? "" : " (node " + this.id + ")";
	}

	/** A call kept for when its node answers: sent once a reply comes to a call numbered above {@code after}. */
	private record Later(long after, Mono<?> call) {
	}

}
