package io.windowlimiter.gateway.test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.IntStream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import io.lettuce.core.sentinel.api.sync.RedisSentinelCommands;

/**
 * A primary with one replica watched by three Sentinels (quorum 2), all {@code redis-server}
 * processes on loopback ports, each test its own: failover tests change who is primary.
 */
public final class RedisSentinelTestServer implements AutoCloseable {

	/** The name the Sentinels monitor the primary under. */
	public static final String MASTER = "mymaster";

	private final RedisNode primary;

	private final RedisNode replica;

	private final List<RedisNode> sentinels;

	private final RedisClient admin = RedisClient.create();

	private RedisSentinelTestServer(Duration downAfter) {
		String[] args = { "--repl-diskless-sync-delay", "0" };
		this.primary = RedisNode.server("sentinel-primary", args);
		this.replica = RedisNode.server("sentinel-replica", "--replicaof", "127.0.0.1",
				Integer.toString(this.primary.port()), "--repl-diskless-sync-delay", "0");
		List<String> config = List.of("sentinel monitor " + MASTER + " 127.0.0.1 " + this.primary.port() + " 2",
				"sentinel down-after-milliseconds " + MASTER + " " + downAfter.toMillis(),
				"sentinel failover-timeout " + MASTER + " 10000", "sentinel parallel-syncs " + MASTER + " 1");
		this.sentinels = IntStream.range(0, 3).mapToObj(i -> RedisNode.sentinel("sentinel", config)).toList();
		awaitReady(Duration.ofSeconds(30));
	}

	/** Starts one; the Sentinels consider a primary down when it has not answered for {@code downAfter}. */
	public static RedisSentinelTestServer start(Duration downAfter) {
		return new RedisSentinelTestServer(downAfter);
	}

	/** The node started as primary (a failover makes it a replica). */
	public RedisNode primary() {
		return this.primary;
	}

	/** The node started as replica (a failover makes it the primary). */
	public RedisNode replica() {
		return this.replica;
	}

	/** {@code host:port} of each Sentinel, as {@code spring.data.redis.sentinel.nodes} takes them. */
	public List<String> sentinelAddresses() {
		return this.sentinels.stream().map(RedisNode::address).toList();
	}

	/** The primary's port as the Sentinels see it now. */
	public int primaryPort() {
		return ((InetSocketAddress) onSentinel(sentinel -> sentinel.getMasterAddrByName(MASTER))).getPort();
	}

	/** Asks the Sentinels to fail over now, as an operator does before maintenance. */
	public void failover() {
		onSentinel(sentinel -> sentinel.failover(MASTER));
	}

	/** Waits until the Sentinels name another primary than {@code port} and the new one takes writes. */
	public void awaitPrimaryOtherThan(int port, Duration within) {
		long deadline = System.nanoTime() + within.toNanos();
		while (primaryPort() == port || !isWritablePrimary(primaryPort())) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("No failover away from port " + port + " within " + within);
			}
			RedisNode.pause(Duration.ofMillis(50));
		}
	}

	/**
	 * Waits until the node replicates from the current primary. A primary that a planned failover
	 * replaced goes on taking writes until the Sentinels get round to demoting it (they look every
	 * 10 s); whatever it took meanwhile is dropped when it resyncs.
	 */
	public void awaitReplica(RedisNode node, Duration within) {
		long deadline = System.nanoTime() + within.toNanos();
		while (true) {
			String replication;
			try {
				replication = onNode(node, redis -> redis.info("replication"));
			}
			catch (RedisException ex) {
				// the Sentinels demote the old primary with CLIENT KILL: our connection may be reset mid-way
				replication = "";
			}
			if (replication.contains("role:slave") && replication.contains("master_link_status:up")
					&& replication.contains("master_port:" + primaryPort() + "\r\n")) {
				return;
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException(node + " not a replica of the new primary within " + within);
			}
			RedisNode.pause(Duration.ofMillis(50));
		}
	}

	/** Runs commands on one data node. */
	public <T> T onNode(RedisNode node, Function<RedisCommands<String, String>, T> commands) {
		try (StatefulRedisConnection<String, String> connection = this.admin.connect(uri(node.port()))) {
			return commands.apply(connection.sync());
		}
	}

	@Override
	public void close() {
		this.admin.shutdown();
		this.sentinels.forEach(RedisNode::kill);
		this.replica.kill();
		this.primary.kill();
	}

	private boolean isWritablePrimary(int port) {
		try (StatefulRedisConnection<String, String> connection = this.admin.connect(uri(port))) {
			return connection.sync().info("replication").contains("role:master");
		}
		catch (RuntimeException notUpYet) {
			return false;
		}
	}

	private <T> T onSentinel(Function<RedisSentinelCommands<String, String>, T> commands) {
		RuntimeException last = null;
		for (RedisNode sentinel : this.sentinels) {
			if (!sentinel.isAlive()) {
				continue;
			}
			try (StatefulRedisSentinelConnection<String, String> connection = this.admin
				.connectSentinel(uri(sentinel.port()))) {
				return commands.apply(connection.sync());
			}
			catch (RuntimeException ex) {
				last = ex;
			}
		}
		throw new IllegalStateException("No Sentinel answered", last);
	}

	/** Waits until the replica is in sync and every Sentinel knows the replica and the other two Sentinels. */
	private void awaitReady(Duration within) {
		long deadline = System.nanoTime() + within.toNanos();
		List<String> problems = new ArrayList<>();
		while (System.nanoTime() < deadline) {
			problems.clear();
			if (!onNode(this.replica, redis -> redis.info("replication")).contains("master_link_status:up")) {
				problems.add("replica not in sync");
			}
			for (RedisNode sentinel : this.sentinels) {
				try (StatefulRedisSentinelConnection<String, String> connection = this.admin
					.connectSentinel(uri(sentinel.port()))) {
					String info = connection.sync().info("sentinel");
					if (!info.contains("status=ok") || !info.contains("slaves=1") || !info.contains("sentinels=3")) {
						problems.add(sentinel + ": " + info.lines().filter(line -> line.startsWith("master0")).toList());
					}
				}
			}
			if (problems.isEmpty()) {
				return;
			}
			RedisNode.pause(Duration.ofMillis(100));
		}
		throw new IllegalStateException("Sentinels not ready within " + within + ": " + problems);
	}

	private static RedisURI uri(int port) {
		return RedisURI.builder().withHost("127.0.0.1").withPort(port).withTimeout(Duration.ofSeconds(5)).build();
	}

}
