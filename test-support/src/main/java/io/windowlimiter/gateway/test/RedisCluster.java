package io.windowlimiter.gateway.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.IntStream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * A real Redis Cluster of {@code redis-server} processes on loopback ports: three masters holding a
 * third of the 16384 slots each, and a replica per master. Nodes are joined with the cluster's own
 * commands (CLUSTER SET-CONFIG-EPOCH, ADDSLOTS, MEET, REPLICATE), as {@code redis-cli --cluster create}
 * does, so nothing beyond redis-server is needed.
 *
 * <p>Always processes, also where Docker runs: cluster nodes tell clients their own address, which a
 * container behind port mapping gets wrong. This class starts the nodes and runs admin commands on them;
 * the clients a test talks through are a subclass's business (the library's tests configure them as its
 * auto-configuration does, which this module cannot depend on: the library's tests depend on it).
 */
public class RedisCluster implements AutoCloseable {

	/** Slots of a Redis Cluster. */
	public static final int SLOTS = 16384;

	private static final int MASTERS = 3;

	private final List<RedisNode> masters;

	private final List<RedisNode> replicas;

	private final RedisClient admin = RedisClient.create();

	/** Starts the nodes and joins them; a master is failed over {@code nodeTimeout} after it stops answering. */
	protected RedisCluster(Duration nodeTimeout) {
		String[] clusterArgs = { "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--cluster-node-timeout", Long.toString(nodeTimeout.toMillis()),
				// a replica's first sync starts at once instead of waiting 5 s for more replicas
				"--repl-diskless-sync-delay", "0" };
		this.masters = IntStream.range(0, MASTERS).mapToObj(i -> RedisNode.server("cluster-master", clusterArgs)).toList();
		this.replicas = IntStream.range(0, MASTERS).mapToObj(i -> RedisNode.server("cluster-replica", clusterArgs)).toList();
		join();
	}

	/** The nodes started as masters, in slot order (a failover may have demoted some since). */
	public List<RedisNode> masters() {
		return this.masters;
	}

	/** The replica started for each master, in the masters' order. */
	public List<RedisNode> replicas() {
		return this.replicas;
	}

	public List<RedisNode> nodes() {
		List<RedisNode> nodes = new ArrayList<>(this.masters);
		nodes.addAll(this.replicas);
		return nodes;
	}

	/** {@code host:port} of every node, as {@code spring.data.redis.cluster.nodes} takes them. */
	public List<String> nodeAddresses() {
		return nodes().stream().map(RedisNode::address).toList();
	}

	/** Runs admin commands on one node, over a connection of their own. */
	public <T> T onNode(RedisNode node, Function<RedisCommands<String, String>, T> commands) {
		RedisURI uri = RedisURI.builder().withHost("127.0.0.1").withPort(node.port()).withTimeout(Duration.ofSeconds(5)).build();
		try (StatefulRedisConnection<String, String> connection = this.admin.connect(uri)) {
			return commands.apply(connection.sync());
		}
	}

	/** Whether the node is a master now (failovers change roles). */
	public boolean isMaster(RedisNode node) {
		return onNode(node, redis -> redis.info("replication")).contains("role:master");
	}

	/** Empties every node's script cache, so the next run of each script takes the NOSCRIPT path. */
	public void flushScripts() {
		nodes().stream().filter(RedisNode::isAlive).forEach(node -> onNode(node, RedisCommands::scriptFlush));
	}

	/** Waits until every live node sees the cluster as whole and agrees on three masters with replicas. */
	public void awaitHealthy(Duration within) {
		long deadline = System.nanoTime() + within.toNanos();
		String problem = null;
		while (System.nanoTime() < deadline) {
			problem = healthProblem();
			if (problem == null) {
				return;
			}
			RedisNode.pause(Duration.ofMillis(50));
		}
		throw new IllegalStateException("Redis Cluster not healthy within " + within + ": " + problem);
	}

	@Override
	public void close() {
		this.admin.shutdown();
		nodes().forEach(RedisNode::kill);
	}

	private void join() {
		List<RedisNode> nodes = nodes();
		for (int i = 0; i < nodes.size(); i++) {
			long epoch = i + 1;
			onNode(nodes.get(i), redis -> redis.clusterSetConfigEpoch(epoch));
		}
		for (int i = 0; i < MASTERS; i++) {
			int[] slots = IntStream.range(SLOTS * i / MASTERS, SLOTS * (i + 1) / MASTERS).toArray();
			onNode(this.masters.get(i), redis -> redis.clusterAddSlots(slots));
		}
		RedisNode first = nodes.get(0);
		for (RedisNode node : nodes.subList(1, nodes.size())) {
			onNode(first, redis -> redis.clusterMeet("127.0.0.1", node.port()));
		}
		awaitEveryNodeKnows(nodes.size());
		for (int i = 0; i < MASTERS; i++) {
			String masterId = onNode(this.masters.get(i), RedisCommands::clusterMyId);
			onNode(this.replicas.get(i), redis -> redis.clusterReplicate(masterId));
		}
		awaitHealthy(Duration.ofSeconds(30));
	}

	private void awaitEveryNodeKnows(int count) {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (!nodes().stream().allMatch(node -> onNode(node, RedisCommands::clusterInfo)
			.contains("cluster_known_nodes:" + count + "\r\n"))) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Cluster nodes did not meet within 30 s");
			}
			RedisNode.pause(Duration.ofMillis(50));
		}
	}

	/** What is not yet right, or null when the cluster is healthy. */
	private String healthProblem() {
		List<RedisNode> live = nodes().stream().filter(RedisNode::isAlive).toList();
		for (RedisNode node : live) {
			if (!onNode(node, RedisCommands::clusterInfo).contains("cluster_state:ok")) {
				return node + " says cluster_state is not ok";
			}
			// every node must see every live replica as one, or a client reading its view would not know them
			List<String[]> view = onNode(node, RedisCommands::clusterNodes).lines()
				.map(line -> line.split(" "))
				.filter(fields -> !fields[2].contains("fail"))
				.toList();
			long mastersWithSlots = view.stream().filter(fields -> fields[2].contains("master") && fields.length > 8).count();
			long replicas = view.stream().filter(fields -> fields[2].contains("slave")).count();
			if (mastersWithSlots != MASTERS || replicas != live.size() - MASTERS) {
				return node + " sees " + mastersWithSlots + " masters with slots and " + replicas + " replicas";
			}
			String replication = onNode(node, redis -> redis.info("replication"));
			if (replication.contains("role:slave") && !replication.contains("master_link_status:up")) {
				return node + " is a replica not yet in sync";
			}
		}
		return null;
	}

}
