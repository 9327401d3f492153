package io.windowlimiter.core.failure;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.windowlimiter.core.failure.RedisGuard.Topology;

/**
 * The Redis nodes the guard knows (one for a standalone Redis or Sentinel, each master of a cluster) with the
 * progress of each, and what the {@link Topology} tells of them: a node whose connection is down is stalled at
 * once, a node no longer a master serving slots is forgotten.
 */
final class GuardedNodes {

	/** More Redis nodes than a cluster has masters; beyond, ids no longer used are dropped. */
	private static final int MAX_NODES = 1_024;

	/** Progress of each Redis node decisions went to (one for a standalone Redis or Sentinel). */
	private final Map<Object, NodeProgress> nodes = new ConcurrentHashMap<>();

	private final GuardReports reports;

	private final KeptCalls kept;

	/** What the guard knows of the connections and the cluster's masters; nothing until {@link #follow}. */
	private volatile Topology topology = Topology.UNKNOWN;

	GuardedNodes(GuardReports reports, KeptCalls kept) {
		this.reports = reports;
		this.kept = kept;
	}

	/** Has the nodes follow the connections' state and the cluster's masters. */
	void follow(Topology topology) {
		this.topology = topology;
	}

	NodeProgress of(Object node) {
		NodeProgress known = this.nodes.get(node);
		if (known != null) {
			return known;
		}
		// nodes come and go with failovers and resharding; a bound keeps ids nobody uses from piling up
		if (this.nodes.size() >= MAX_NODES) {
			this.nodes.entrySet()
				.removeIf(entry -> !entry.getValue().stalled && entry.getValue().inFlight.get() == 0
						&& !entry.getValue().keepsLater() && entry.getKey() != RedisGuard.ONE_NODE);
		}
		return this.nodes.computeIfAbsent(node, NodeProgress::new);
	}

	/** Every node known now. */
	Collection<NodeProgress> all() {
		return this.nodes.values();
	}

	/** Whether some node is taken to be hanging. */
	boolean anyStalled() {
		for (NodeProgress node : this.nodes.values()) {
			if (node.stalled) {
				return true;
			}
		}
		return false;
	}

	/** How many calls wait on all nodes, with those given up that Redis may still run. */
	int inFlight() {
		int inFlight = 0;
		for (NodeProgress node : this.nodes.values()) {
			inFlight += node.inFlight.get();
		}
		return inFlight;
	}

	/**
	 * Whether the node's connection is known to be down (closed, Lettuce reconnecting): nothing sent on it is
	 * answered before it is back, and Lettuce would queue it meanwhile. The node is then taken as stalled at once,
	 * without waiting the stall timeout (a killed Redis, a fresh instance whose Redis died): its decisions fail at
	 * once and send nothing. Once the connection is back the next decision is a trial, as after any stall.
	 */
	boolean isDown(NodeProgress node, long now) {
		boolean down;
		try {
			down = this.topology.isDisconnected(node.id);
		}
		catch (RuntimeException ex) {
			// a topology that cannot tell says nothing: the stall rule decides
			down = false;
		}
		if (down && !node.down) {
			node.down = true;
			if (!node.stalled) {
				node.stalled = true;
				this.reports.report("The connection to Redis" + node.described() + " is down: routes apply their fail-mode until "
						+ "it is back and Redis answers");
			}
		}
		else if (!down && node.down) {
			node.down = false;
			// back: the next decision (or the watchdog) may try it at once
			node.nextTrial = now;
		}
		return down;
	}

	/**
	 * Forgets the nodes that are no longer masters the client routes to (failed over, removed from the cluster):
	 * a master failed over while stalled never answers as such again, and would otherwise keep the guard stalled
	 * (health DEGRADED) and its places taken for good. What they kept to undo is sent where the keys live now.
	 */
	void retireGone() {
		Set<Object> masters;
		try {
			masters = this.topology.masters();
		}
		catch (RuntimeException ex) {
			return;
		}
		if (masters == null || masters.isEmpty()) {
			return;
		}
		for (Map.Entry<Object, NodeProgress> entry : this.nodes.entrySet()) {
			NodeProgress node = entry.getValue();
			if (node.id == RedisGuard.ONE_NODE || masters.contains(node.id) || !this.nodes.remove(entry.getKey(), node)) {
				continue;
			}
			boolean wasStalled = node.stalled;
			int kept = node.inFlight.get();
			List<PendingCall<?>> toUndo = node.retire();
			if (wasStalled || kept > 0) {
				this.reports.report("Redis node " + node.id + " is no longer a master" + (wasStalled ? " (it was stalled)" : "")
						+ ": its " + kept + " place(s) in flight given back, its keys' decisions go to their master now");
			}
			toUndo.forEach(this.kept::undo);
			this.kept.sendAll(node.retireLater());
		}
	}

}
