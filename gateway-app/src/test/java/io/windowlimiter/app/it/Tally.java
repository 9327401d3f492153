package io.windowlimiter.app.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/** What a set of requests got back: answers by status, and requests that got none. Thread-safe. */
final class Tally {

	private final Map<Integer, AtomicInteger> statuses = new TreeMap<>();

	private final AtomicInteger unanswered = new AtomicInteger();

	private final AtomicInteger notKeptAlive = new AtomicInteger();

	private final List<String> problems = new ArrayList<>();

	private final List<String> unansweredDetails = new ArrayList<>();

	void answered(int status) {
		synchronized (this.statuses) {
			this.statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
		}
	}

	void unanswered(String what) {
		this.unanswered.incrementAndGet();
		synchronized (this.unansweredDetails) {
			if (this.unansweredDetails.size() < 200) {
				this.unansweredDetails.add(what);
			}
		}
	}

	void notKeptAlive(String what) {
		this.notKeptAlive.incrementAndGet();
		problem(what);
	}

	void problem(String what) {
		synchronized (this.problems) {
			if (this.problems.size() < 20) {
				this.problems.add(what);
			}
		}
	}

	int status(int status) {
		synchronized (this.statuses) {
			AtomicInteger count = this.statuses.get(status);
			return (count != null) ? count.get() : 0;
		}
	}

	int answers() {
		synchronized (this.statuses) {
			return this.statuses.values().stream().mapToInt(AtomicInteger::get).sum();
		}
	}

	int unanswered() {
		return this.unanswered.get();
	}

	int notKeptAlive() {
		return this.notKeptAlive.get();
	}

	@Override
	public String toString() {
		synchronized (this.statuses) {
			return "answers by status " + this.statuses + ", unanswered " + this.unanswered + ", connections not kept alive "
					+ this.notKeptAlive + (this.unansweredDetails.isEmpty() ? "" : ", unanswered " + this.unansweredDetails)
					+ (this.problems.isEmpty() ? "" : ", first problems " + this.problems);
		}
	}

}
