package io.windowlimiter.gateway.scaleout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

import io.windowlimiter.gateway.test.RedisClusterTestServer;
import io.windowlimiter.gateway.test.RedisNode;
import io.windowlimiter.gateway.test.RedisProcess;
import io.windowlimiter.gateway.test.RedisSentinelTestServer;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * Measures what failovers do to decisions, for the README: planned (SENTINEL FAILOVER, CLUSTER
 * FAILOVER) and crashes (the primary killed with SIGKILL), each several times, through a gateway
 * configured only by {@code spring.data.redis.*}. Not part of {@code verify} (its name does not end
 * in Tests); run it with
 *
 * <pre>
 * mvn -B -ntp -pl gateway-filter test -Dtest=FailoverMeasurement -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * System properties: {@code failover.runs} (default 3), {@code failover.detection} (Sentinel's
 * down-after-milliseconds and the cluster's node timeout, default 5000 ms), {@code failover.scenarios}
 * (some of sentinel-planned, sentinel-crash, cluster-planned, cluster-crash), {@code failover.properties}
 * (extra gateway properties, comma-separated, to compare settings).
 */
class FailoverMeasurement {

	private static final int RUNS = Integer.getInteger("failover.runs", 3);

	private static final Duration DETECTION = Duration.ofMillis(Long.getLong("failover.detection", 5_000));

	private static final Duration AT_MOST = DETECTION.multipliedBy(6);

	private final List<String> table = new ArrayList<>();

	private static final List<String> SCENARIOS = List
		.of(System.getProperty("failover.scenarios", "sentinel-planned,sentinel-crash,cluster-planned,cluster-crash")
			.split(","));

	/** Extra {@code spring.data.redis.*} properties for the gateway, e.g. to compare settings. */
	private static final List<String> EXTRA = List.of(System.getProperty("failover.properties", "").split(","))
		.stream()
		.filter(property -> !property.isBlank())
		.toList();

	@Test
	void measure() {
		measure("sentinel-planned", "Sentinel, SENTINEL FAILOVER", this::sentinelPlanned);
		measure("sentinel-crash", "Sentinel, primary killed", this::sentinelCrash);
		measure("cluster-planned", "Cluster, CLUSTER FAILOVER on a replica", this::clusterPlanned);
		measure("cluster-crash", "Cluster, master killed", this::clusterCrash);
		System.out.println();
		System.out.println("Failover measurements: " + RUNS + " runs each, detection timeout " + DETECTION.toMillis()
				+ " ms, 8 callers deciding for 200 clients without pause, a caller gives up after "
				+ FailoverProbe.GIVE_UP.toMillis() + " ms, extra properties " + EXTRA + ", Redis " + RedisProcess.binary());
		System.out.println("| scenario | run | decisions | failed | failed or > 100 ms | first to last trouble (ms) | "
				+ "trouble under way (ms) | slowest (ms) | acknowledged | lost | lost, as seconds of decisions | "
				+ "counted though failed | clients still failing |");
		System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
		this.table.forEach(System.out::println);
	}

	private void measure(String id, String scenario, Function<Integer, FailoverProbe.Report> run) {
		if (!SCENARIOS.contains(id)) {
			return;
		}
		for (int i = 1; i <= RUNS; i++) {
			FailoverProbe.Report report = run.apply(i);
			System.out.println(scenario + " #" + i + ": " + report);
			this.table.add(String.format("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.1f | %d | %d |", scenario, i,
					report.decisions(), report.failed(), report.troubled(), report.disrupted().toMillis(),
					report.troubledTime().toMillis(), report.slowest().toMillis(), report.acknowledged(), report.lost(), report.lostSeconds(), report.extra(), report.unread()));
		}
	}

	private FailoverProbe.Report sentinelPlanned(int run) {
		return onSentinel(sentinel -> {
			int before = sentinel.primaryPort();
			sentinel.failover();
			sentinel.awaitPrimaryOtherThan(before, AT_MOST);
			// counts are read back once the old primary has given up what it took meanwhile
			sentinel.awaitReplica(sentinel.primary(), AT_MOST);
		});
	}

	private FailoverProbe.Report sentinelCrash(int run) {
		return onSentinel(sentinel -> {
			int before = sentinel.primaryPort();
			sentinel.primary().kill();
			sentinel.awaitPrimaryOtherThan(before, AT_MOST);
		});
	}

	private FailoverProbe.Report clusterPlanned(int run) {
		return onCluster(cluster -> {
			RedisNode replica = cluster.replicas().get(0);
			cluster.onNode(replica, redis -> redis.clusterFailover(false));
			FailoverTests.awaitMaster(cluster, replica, AT_MOST);
		});
	}

	private FailoverProbe.Report clusterCrash(int run) {
		return onCluster(cluster -> {
			cluster.masters().get(0).kill();
			FailoverTests.awaitMaster(cluster, cluster.replicas().get(0), AT_MOST);
		});
	}

	private static String[] with(String... properties) {
		List<String> all = new ArrayList<>(List.of(properties));
		all.addAll(EXTRA);
		return all.toArray(String[]::new);
	}

	private FailoverProbe.Report onSentinel(Consumer<RedisSentinelTestServer> failover) {
		try (RedisSentinelTestServer sentinel = RedisSentinelTestServer.start(DETECTION);
				ConfigurableApplicationContext gateway = FailoverTests.gateway(with(
						"spring.data.redis.sentinel.master=" + RedisSentinelTestServer.MASTER,
						"spring.data.redis.sentinel.nodes=" + String.join(",", sentinel.sentinelAddresses())))) {
			return FailoverTests.probe(gateway).run(() -> failover.accept(sentinel), Duration.ofSeconds(2),
					Duration.ofSeconds(3), AT_MOST);
		}
	}

	private FailoverProbe.Report onCluster(Consumer<RedisClusterTestServer> failover) {
		try (RedisClusterTestServer cluster = RedisClusterTestServer.start(DETECTION);
				ConfigurableApplicationContext gateway = FailoverTests
					.gateway(with("spring.data.redis.cluster.nodes=" + String.join(",", cluster.nodeAddresses())))) {
			return FailoverTests.probe(gateway).run(() -> failover.accept(cluster), Duration.ofSeconds(2),
					Duration.ofSeconds(3), AT_MOST);
		}
	}

}
