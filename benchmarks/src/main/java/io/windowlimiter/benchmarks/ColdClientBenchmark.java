package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.gateway.test.RedisCluster;
import io.windowlimiter.gateway.test.RedisNode;

/**
 * Part 8's last case (issue 46): on a Redis Cluster of three masters (and their replicas), a cold client sending
 * {@value #COLD_RATE} requests a second, open loop, whose key's slot is on the hot client's master; its latency alone,
 * beside the hot client flooding a route with {@code lease} through both instances, and beside the same without
 * lease, in rounds. All on one machine's cores: the hot client's load takes CPU from the gateways and Redis the cold
 * client also needs, with or without leases.
 */
final class ColdClientBenchmark {

	/**
	 * One phase: the cold client's latencies through the gateway, and of its decisions' Redis round trips (the
	 * {@code gateway.ratelimit.redis} histogram of its route: the upper bound of the bucket holding the p99); the hot
	 * client's req/s (0 when alone); scripts a second on their master.
	 */
	record Phase(String name, double p50Millis, double p99Millis, double redisP99Millis, long requests, long errors,
			double hotPerSecond, double masterScriptsPerSecond) {
	}

	static final int COLD_RATE = 50;

	static final String ALONE = "alone";

	static final String BESIDE_LEASE = "beside hot-lease";

	private static final String HOT_KEY = "client-00000";

	/** A bucket of the cold route's successful round trips: its {@code le} and its cumulative count. */
	private static final Pattern BUCKET = Pattern
		.compile("gateway_ratelimit_redis_seconds_bucket\\{(?=.*route=\"cold\")(?=.*result=\"success\").*le=\"([^\"]+)\".*\\} (\\S+)");

	private final Path workDir;

	private final Path gatewayJar;

	private final int seconds = Settings.integer("lease.cold-seconds", 30);

	private final int warmUpSeconds = Settings.integer("lease.cold-warmup-seconds", 40);

	private final int rounds = Settings.integer("lease.cold-rounds", 2);

	private final Wrk wrk;

	private final List<GatewayProcess> gateways = new ArrayList<>();

	private final ExecutorService wrkRunner = Executors.newFixedThreadPool(2);

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private String setup = "";

	ColdClientBenchmark(Path workDir, Path gatewayJar) throws IOException {
		this.workDir = workDir;
		this.gatewayJar = gatewayJar;
		this.wrk = Wrk.forClients(workDir, 1, Settings.integer("lease.connections", 16));
	}

	String setup() {
		return this.setup;
	}

	/** A cluster of the test servers' kind, failing over after 5 s (no failover is asked for here). */
	private static final class Cluster extends RedisCluster {

		Cluster() {
			super(Duration.ofSeconds(5));
		}

	}

	List<Phase> run() throws IOException, InterruptedException {
		LeaseCase cold = new LeaseCase("cold", LeaseCase.Kind.THROUGHPUT, Algorithm.FIXED_WINDOW,
				LeaseCase.NEVER_REACHED, "1m", null, null, 1, false);
		LeaseCase hot = new LeaseCase("hot", LeaseCase.Kind.THROUGHPUT, Algorithm.FIXED_WINDOW, LeaseCase.NEVER_REACHED,
				"1m", null, null, 1, false);
		LeaseCase hotLease = new LeaseCase(LeaseCase.HOT_LEASE, LeaseCase.Kind.THROUGHPUT, Algorithm.FIXED_WINDOW,
				LeaseCase.NEVER_REACHED, "1m", null, LeaseCase.LEASE, 1, false);
		Path routes = this.workDir.resolve("gateway-leases-cluster.yml");
		Files.writeString(routes, LeaseCase.yaml(List.of(cold, hot, hotLease)));
		try (Cluster cluster = new Cluster(); Downstream downstream = new Downstream()) {
			List<String> clusterArgs = List.of("--spring.data.redis.cluster.nodes=" + String.join(",", cluster.nodeAddresses()));
			for (String name : List.of("a", "b")) {
				this.gateways.add(GatewayProcess.start(this.gatewayJar, cluster.masters().get(0).port(), downstream.uri(),
						routes, this.workDir.resolve("gateway-lease-cluster-" + name + ".log"), "/none/ready", clusterArgs));
			}
			RedisNode master = masterOf(cluster, hot, HOT_KEY);
			String coldKey = null;
			for (int i = 0; coldKey == null; i++) {
				if (masterOf(cluster, cold, "cold-" + i) == master) {
					coldKey = "cold-" + i;
				}
			}
			this.setup = String.format(Locale.ROOT, "A Redis Cluster of 3 masters with a replica each (test-support's "
					+ "RedisCluster) on this machine; the same two gateway-apps and one wrk per instance. A cold client (%s, "
					+ "on route cold: fixed window never reached, no lease) sends %d requests a second, open loop, through "
					+ "instance a, its key's slot on the master of the hot client's (%s, port %d); latency from each "
					+ "request's planned time. JIT warm-up: %d s of the hot client on both hot routes in turn, the cold "
					+ "client beside; then %d rounds of three phases of %d s, every other round backwards: alone, beside "
					+ "the hot client flooding hot-lease (lease %s), beside it flooding hot (no lease)", coldKey, COLD_RATE,
					HOT_KEY, master.port(), this.warmUpSeconds, this.rounds, this.seconds, LeaseCase.LEASE);
			String coldUrl = this.gateways.get(0).url(cold.path());
			phase(cluster, master, "warm-up", coldUrl, coldKey, hotLease, Math.max(1, this.warmUpSeconds / 2));
			phase(cluster, master, "warm-up", coldUrl, coldKey, hot, Math.max(1, this.warmUpSeconds / 2));
			// alone, beside the lease route, beside the route without; every other round backwards, so that a
			// trend through the run (the JIT still compiling, the machine's speed drifting) favours no phase: in
			// smoke runs of one order the phase after another was the faster
			List<LeaseCase> order = new ArrayList<>(Arrays.asList(null, hotLease, hot));
			List<Phase> phases = new ArrayList<>();
			for (int round = 0; round < this.rounds; round++) {
				for (LeaseCase flood : order) {
					String name = (flood == null) ? ALONE : (flood == hotLease) ? BESIDE_LEASE : "beside hot";
					phases.add(phase(cluster, master, name, coldUrl, coldKey, flood, this.seconds));
				}
				Collections.reverse(order);
			}
			return phases;
		}
		finally {
			for (GatewayProcess gateway : this.gateways) {
				gateway.close();
			}
			this.wrkRunner.shutdownNow();
		}
	}

	/**
	 * The cold client for {@code duration} seconds, beside the hot client flooding {@code hot} on both instances
	 * (wrk starts a second before and ends a second after), or alone when {@code hot} is null.
	 */
	private Phase phase(RedisCluster cluster, RedisNode master, String name, String coldUrl, String coldKey,
			LeaseCase hot, int duration) throws IOException, InterruptedException {
		List<Future<Wrk.Run>> flood = new ArrayList<>();
		if (hot != null) {
			for (GatewayProcess gateway : this.gateways) {
				flood.add(this.wrkRunner.submit(() -> this.wrk.run(gateway.url(hot.path()), duration + 2, 1)));
			}
			Thread.sleep(1000);
		}
		LocalRedis.Scripts scripts = LocalRedis.Scripts.of(cluster.onNode(master, r -> r.info("commandstats")));
		TreeMap<Double, Double> redis = redisRoundTrips();
		long started = System.nanoTime();
		List<Double> latencies = new ArrayList<>();
		AtomicLong errors = new AtomicLong();
		coldClient(coldUrl, coldKey, duration, latencies, errors);
		double elapsed = (System.nanoTime() - started) / 1e9;
		LocalRedis.Scripts ran = LocalRedis.Scripts.of(cluster.onNode(master, r -> r.info("commandstats")))
			.minus(scripts);
		double redisP99Millis = p99Millis(redisRoundTrips(), redis);
		double hotPerSecond = 0;
		for (Future<Wrk.Run> run : flood) {
			try {
				hotPerSecond += run.get().perSecond();
			}
			catch (ExecutionException ex) {
				throw new IllegalStateException("wrk on " + hot.routeId() + " failed", ex.getCause());
			}
		}
		Phase phase = new Phase(name, SseBenchmark.quantile(latencies, 0.5), SseBenchmark.quantile(latencies, 0.99),
				redisP99Millis, latencies.size(), errors.get(), hotPerSecond, ran.calls() / elapsed);
		System.out.printf(Locale.ROOT, "leases   cluster %-18s cold client p50 %6.2f ms  p99 %6.2f ms  Redis round trip "
				+ "p99 <= %.2f ms (%d requests, %d errors); hot client %,.0f req/s; scripts on their master %,.0f/s%n",
				name, phase.p50Millis(), phase.p99Millis(), redisP99Millis, phase.requests(), phase.errors(), hotPerSecond, phase.masterScriptsPerSecond());
		return phase;
	}

	/** {@value #COLD_RATE} requests a second, each sent at its planned time whatever the ones before it do. */
	private void coldClient(String url, String key, int duration, List<Double> latencies, AtomicLong errors) {
		HttpRequest request = HttpRequest.newBuilder(URI.create(url)).header("X-API-Key", key)
			.timeout(Duration.ofSeconds(5)).build();
		long interval = 1_000_000_000L / COLD_RATE;
		long start = System.nanoTime();
		List<CompletableFuture<Void>> pending = new ArrayList<>();
		for (int i = 0; i < duration * COLD_RATE; i++) {
			long planned = start + i * interval;
			LockSupport.parkNanos(planned - System.nanoTime());
			pending.add(this.http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).handle((response, ex) -> {
				double millis = (System.nanoTime() - planned) / 1e6;
				synchronized (latencies) {
					latencies.add(millis);
				}
				if (ex != null || response.statusCode() != 200) {
					errors.incrementAndGet();
				}
				return null;
			}));
		}
		CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
	}

	/**
	 * The cold route's Redis round trips on instance a so far, cumulative by bucket ({@code le}, seconds), from
	 * {@code gateway_ratelimit_redis_seconds_bucket} on {@code /actuator/prometheus}.
	 */
	private TreeMap<Double, Double> redisRoundTrips() throws IOException, InterruptedException {
		String body = this.http.send(HttpRequest.newBuilder(URI.create(this.gateways.get(0).url("/actuator/prometheus")))
			.build(), HttpResponse.BodyHandlers.ofString()).body();
		TreeMap<Double, Double> buckets = new TreeMap<>();
		for (String line : body.split("\n")) {
			Matcher matcher = BUCKET.matcher(line);
			if (matcher.matches()) {
				double le = matcher.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(matcher.group(1));
				buckets.merge(le, Double.parseDouble(matcher.group(2)), Double::sum);
			}
		}
		return buckets;
	}

	/** The upper bound, in milliseconds, of the bucket that holds the p99 of the round trips from {@code before}. */
	private static double p99Millis(TreeMap<Double, Double> after, TreeMap<Double, Double> before) {
		double total = after.getOrDefault(Double.POSITIVE_INFINITY, 0.0)
				- before.getOrDefault(Double.POSITIVE_INFINITY, 0.0);
		for (Map.Entry<Double, Double> bucket : after.entrySet()) {
			if (bucket.getValue() - before.getOrDefault(bucket.getKey(), 0.0) >= 0.99 * total) {
				return bucket.getKey() * 1000;
			}
		}
		return Double.NaN;
	}

	/** The master that holds {@code key}'s quota on {@code c}'s route: the one whose key count grows on a request. */
	private RedisNode masterOf(RedisCluster cluster, LeaseCase c, String key) throws IOException, InterruptedException {
		List<Long> before = cluster.masters().stream().map(m -> cluster.onNode(m, r -> r.dbsize())).toList();
		HttpResponse<Void> response = this.http.send(HttpRequest.newBuilder(URI.create(this.gateways.get(0).url(c.path())))
			.header("X-API-Key", key).build(), HttpResponse.BodyHandlers.discarding());
		if (response.statusCode() != 200) {
			throw new IllegalStateException("Route " + c.routeId() + " answered " + response.statusCode());
		}
		for (int i = 0; i < before.size(); i++) {
			RedisNode node = cluster.masters().get(i);
			if (cluster.onNode(node, r -> r.dbsize()) > before.get(i)) {
				return node;
			}
		}
		throw new IllegalStateException("No master holds a new key after a request of " + key + " on " + c.routeId());
	}

}
