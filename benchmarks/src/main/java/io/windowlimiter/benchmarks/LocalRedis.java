package io.windowlimiter.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.windowlimiter.gateway.test.RedisProcess;

/**
 * The one Redis server of a benchmark run: a {@code redis-server} that test-support's
 * {@link RedisProcess} starts on a free loopback port with persistence off, or one given by
 * {@code bench.redis.port} (then left running). Also the admin connection the benchmarks use between
 * measurements (FLUSHALL, INFO, SCRIPT LOAD, DEBUG), never while measuring.
 */
final class LocalRedis implements AutoCloseable {

	static final String HOST = "127.0.0.1";

	private final int port;

	/** The server this run started, else null (one given by {@code bench.redis.port}). */
	private final RedisProcess process;

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private LocalRedis(int port, RedisProcess process) {
		this.port = port;
		this.process = process;
		this.client = RedisClient.create(RedisURI.create(HOST, port));
		this.client.setDefaultTimeout(Duration.ofSeconds(60));
		this.connection = this.client.connect();
	}

	/**
	 * Starts {@code redis-server} (its files and log in {@code workDir}), or connects to the one
	 * {@code bench.redis.port} names.
	 */
	static LocalRedis startOrConnect(Path workDir) {
		int given = Settings.integer("redis.port", 0);
		if (given > 0) {
			return new LocalRedis(given, null);
		}
		// Defaults otherwise (encodings, listpack thresholds): the memory figures must be those of a stock server.
		RedisProcess process = RedisProcess.launch(workDir, "--enable-debug-command", "local");
		return new LocalRedis(process.port(), process);
	}

	int port() {
		return this.port;
	}

	RedisCommands<String, String> admin() {
		return this.connection.sync();
	}

	void flushAll() {
		admin().flushall();
	}

	/** {@code used_memory} from INFO memory, in bytes. */
	long usedMemory() {
		return Long.parseLong(infoField("memory", "used_memory"));
	}

	/** What client connections' buffers hold ({@code mem_clients_normal}), part of {@link #usedMemory()}. */
	long clientBuffersMemory() {
		return Long.parseLong(infoField("memory", "mem_clients_normal"));
	}

	/** Error replies Redis has sent since it started ({@code total_error_replies}). */
	long errorReplies() {
		return Long.parseLong(infoField("stats", "total_error_replies"));
	}

	/** CPU time the server has used so far, user and system, in seconds ({@code INFO cpu}). */
	double cpuSeconds() {
		return Double.parseDouble(infoField("cpu", "used_cpu_user")) + Double.parseDouble(infoField("cpu", "used_cpu_sys"));
	}

	/** Scripts run (EVAL, EVALSHA and their read-only forms) and the time Redis spent in them, from {@code INFO commandstats}. */
	record Scripts(long calls, long micros) {

		Scripts minus(Scripts earlier) {
			return new Scripts(this.calls - earlier.calls, this.micros - earlier.micros);
		}

		/** The scripts in the text of {@code INFO commandstats} of any server (a cluster's node too). */
		static Scripts of(String commandstats) {
			long calls = 0;
			long micros = 0;
			for (String line : commandstats.split("\r?\n")) {
				if (line.matches("cmdstat_(eval|evalsha|eval_ro|evalsha_ro):.*")) {
					for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
						String[] pair = field.split("=", 2);
						if (pair[0].equals("calls")) {
							calls += Long.parseLong(pair[1]);
						}
						else if (pair[0].equals("usec")) {
							micros += Long.parseLong(pair[1]);
						}
					}
				}
			}
			return new Scripts(calls, micros);
		}

	}

	Scripts scripts() {
		return Scripts.of(admin().info("commandstats"));
	}

	/** Reads Redis has made from its clients' sockets since it started ({@code total_reads_processed}). */
	long readsProcessed() {
		return Long.parseLong(infoField("stats", "total_reads_processed"));
	}

	String version() {
		return infoField("server", "redis_version");
	}

	/**
	 * Turns Redis's background expiry off or on. The memory benchmark replays time, so a key's TTL
	 * (relative, in real time) can end while it still holds the replayed client's state; off, such a key
	 * stays until something reads it. Returns whether Redis allowed it (DEBUG may be disabled).
	 */
	boolean activeExpire(boolean on) {
		try {
			admin().dispatch(CommandType.DEBUG, new StatusOutput<>(StringCodec.UTF8),
					new CommandArgs<>(StringCodec.UTF8).add("SET-ACTIVE-EXPIRE").add(on ? 1 : 0));
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/** Loads a script and checks Redis gives it the SHA the library computed, so both run the same script. */
	String scriptLoad(String script, String expectedSha) {
		String sha = admin().scriptLoad(script);
		if (!sha.equalsIgnoreCase(expectedSha)) {
			throw new IllegalStateException("Redis gave SHA " + sha + ", the library uses " + expectedSha);
		}
		return sha;
	}

	/** Runs a script once by SHA, to check the arguments a benchmark will send are accepted. */
	List<Object> evalsha(String sha, String[] keys, String... args) {
		return admin().evalsha(sha, ScriptOutputType.MULTI, keys, args);
	}

	private String infoField(String section, String field) {
		for (String line : admin().info(section).split("\r?\n")) {
			if (line.startsWith(field + ":")) {
				return line.substring(field.length() + 1).trim();
			}
		}
		throw new IllegalStateException("INFO " + section + " has no " + field);
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
		if (this.process != null) {
			this.process.close();
		}
	}

}
