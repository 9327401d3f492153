package io.windowlimiter.core.autoconfigure;

import java.time.Duration;

import jakarta.validation.constraints.Min;

/** Plans and overrides assigned to clients at run time (see PlanAssignments). */
public class AssignmentProperties {

	/**
	 * How often each instance asks Redis whether assignments changed (one GET); a change takes effect on
	 * every instance within this interval plus one reload.
	 */
	private Duration refreshInterval = Duration.ofMillis(250);

	/** The most assignments kept; a new one beyond it is refused. Every instance holds all of them. */
	@Min(1)
	private long maxEntries = 100_000;

	public Duration getRefreshInterval() {
		return this.refreshInterval;
	}

	public void setRefreshInterval(Duration refreshInterval) {
		this.refreshInterval = refreshInterval;
	}

	public long getMaxEntries() {
		return this.maxEntries;
	}

	public void setMaxEntries(long maxEntries) {
		this.maxEntries = maxEntries;
	}

}
