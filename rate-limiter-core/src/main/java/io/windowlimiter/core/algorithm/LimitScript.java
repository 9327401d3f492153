package io.windowlimiter.core.algorithm;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.key.RedisKeys;
import org.jspecify.annotations.Nullable;

import reactor.core.publisher.Mono;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The one Lua script that decides a request: {@code decide.lua} preceded by the module of every
 * {@link Algorithm}, each defined only for a request that names it (see {@link #modules}), assembled once
 * without comments and run by SHA (loaded once more when Redis answers NOSCRIPT). One round
 * trip decides every limit of a route atomically, all or nothing. The {@link ScriptSender} writes it to
 * Redis.
 *
 * <p>A second script settles a reservation (see {@link #settle}): {@code settle.lua} preceded by the same
 * modules whole, where the decision script takes each module only up to its settle part (the line
 * {@value #SETTLE_PART}), so the decision script runs no more code than before. Two scripts rather than a
 * mode of one: their arguments and replies differ, and the decision, sent for every request, stays as small.
 */
public final class LimitScript implements SmartLifecycle {

	/** The line that begins a module's settle part, which only the settle script holds. */
	static final String SETTLE_PART = "-- Settle (see settle.lua).";

	/** Holding instead of refusing (max-delay): after the fixed window's module, before decide.lua. */
	static final String HOLD_MODULE = "hold.lua";

	private final RedisScript<List<Long>> script;

	private final ScriptSender sender;

	private volatile boolean running;

	private final ScriptSender.Script settle;

	/** Releases a request's concurrency slots when its response ends: {@code release.lua}, on its own. */
	private final ScriptSender.Script release;

	/** An operator's reset of a client's keys, noted for the settles: {@code reset.lua}. */
	private final ScriptSender.Script reset;

	/**
	 * @param redis the template whose connection factory, a {@link LettuceConnectionFactory} (the only one
	 * with reactive support), reaches Redis
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	public LimitScript(ReactiveStringRedisTemplate redis) {
		if (!(redis.getConnectionFactory() instanceof LettuceConnectionFactory factory)) {
			throw new IllegalArgumentException("The window rate limiter needs Lettuce, got "
					+ redis.getConnectionFactory().getClass().getName());
		}
		String decideSource = "local algorithms = {}\n"
				// the algorithms this request names, and whether its route holds (max-delay)
				+ "local needed, held = {}, (tonumber(ARGV[3 + 4 * #KEYS]) or 0) > 0\n"
				+ "for i = 3, 4 * #KEYS, 4 do if ARGV[i] then needed[ARGV[i]] = true end end\n"
				+ "local decide_held\n" + modules(false) + withoutComments(read("decide.lua"));
		String settleSource = "local algorithms, settles, needed = {}, {}, {}\n"
				// the algorithms the reservations name: each segment is now, n, at, reserved, actual, 5 per limit, id
				+ "local a = 1\n"
				+ "while a <= #ARGV do local n = tonumber(ARGV[a + 1]) for i = 0, n - 1 do needed[ARGV[a + 5 + 5 * i]] = true end"
				+ " a = a + 6 + 5 * n end\n" + modules(true) + withoutComments(read("settle.lua"));
		this.script = (RedisScript) RedisScript.of(decideSource, List.class);
		this.settle = new ScriptSender.Script(RedisScript.of(settleSource).getSha1(), settleSource, true);
		String releaseSource = withoutComments(read("release.lua"));
		this.release = new ScriptSender.Script(RedisScript.of(releaseSource).getSha1(), releaseSource);
		String resetSource = withoutComments(read("reset.lua"));
		this.reset = new ScriptSender.Script(RedisScript.of(resetSource).getSha1(), resetSource);
		this.sender = new ScriptSender(factory, new ScriptSender.Script(this.script.getSha1(), decideSource),
				this.settle, this.release, this.reset);
	}

	/**
	 * Every algorithm's module, each defined only when the script's arguments name it ({@code needed}): a
	 * script runs its top level on every call, and the functions of modules a route does not use cost Redis
	 * CPU on every decision (measured: a decision of one limit takes about 11 % less Redis time without them,
	 * a settle about 12 %). The fixed window's functions are defined for the calendar quota, and in the decision
	 * script for the holds (max-delay, {@code held}), which read its layout; {@code hold.lua} sets the
	 * {@code decide_held} the decision script declares before the modules.
	 * @param whole with each module's settle part (the settle script), else up to it (the decision script)
	 */
	private static String modules(boolean whole) {
		StringBuilder modules = new StringBuilder();
		for (Algorithm algorithm : Algorithm.values()) {
			String name = "needed['" + algorithm.name() + "']";
			if (algorithm == Algorithm.FIXED_WINDOW) {
				// only the decision script holds (max-delay)
				modules.append("if ").append(name).append(" or needed['").append(CALENDAR).append("']")
					.append(whole ? "" : " or held").append(" then\n")
					.append(module(algorithm.moduleFile(), whole))
					.append("if needed['").append(CALENDAR).append("'] then\n")
					.append(module("calendar.lua", whole))
					.append("end\n");
				if (!whole) {
					modules.append("if held then\n").append(withoutComments(read(HOLD_MODULE))).append("end\n");
				}
			}
			else {
				modules.append("if ").append(name).append(" then\n").append(module(algorithm.moduleFile(), whole));
			}
			modules.append("end\n");
		}
		return modules.toString();
	}

	/** One module without comments: whole, or up to its settle part. */
	private static String module(String file, boolean whole) {
		String module = read(file);
		int settlePart = module.indexOf(SETTLE_PART);
		if (settlePart < 0) {
			throw new IllegalStateException(file + " has no settle part (" + SETTLE_PART + ")");
		}
		return withoutComments(whole ? module : module.substring(0, settlePart));
	}

	@Override
	public void start() {
		this.running = true;
	}

	/**
	 * Writes the settles waiting on the event loops for a decision's write now: at shutdown, once the web server
	 * has answered its last request, before the event loops go (Netty drops their scheduled tasks, and with them
	 * the waits' ends) and before Spring Data Redis closes the connection.
	 */
	@Override
	public void stop() {
		this.running = false;
		this.sender.flushWaiting();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		// stopped after Boot's web server (its START_STOP_LIFECYCLE_PHASE): no request is left to settle
		return SmartLifecycle.DEFAULT_PHASE - 2048 - 1;
	}

	/**
	 * Reconnects the connection decisions are sent on: after a Sentinel failover, so that decisions stop
	 * going to the replaced primary, which counts them until the Sentinels demote it and then drops them.
	 */
	public void reconnect() {
		this.sender.reconnect();
	}

	/** One limit of a decision: the client's key for it and the limit itself, which names its algorithm. */
	public record Limit(String key, WindowPolicy policy) {
	}

	/**
	 * Decides one request.
	 * @param limits every limit of the route; their keys must share one hash tag
	 * @param cost what the request consumes of every limit
	 * @param now time in ms since the epoch, or empty for the Redis server's clock
	 */
	public Mono<Verdict> decide(List<Limit> limits, long cost, String now) {
		List<String> keys = new ArrayList<>(limits.size());
		List<WindowPolicy> policies = new ArrayList<>(limits.size());
		for (Limit limit : limits) {
			keys.add(limit.key());
			policies.add(limit.policy());
		}
		return decide(keys, arguments(policies, cost, now));
	}

	/**
	 * Decides one request against one limit, e.g. for tests and the tools that replay traffic.
	 * @param key the client's key for this limit
	 * @param cost what the request consumes of the limit
	 * @param now time in ms since the epoch, or empty for the Redis server's clock
	 */
	public Mono<Decision> decideOne(String key, WindowPolicy policy, long cost, String now) {
		return decide(List.of(new Limit(key, policy)), cost, now).map(verdict -> verdict.decisions().get(0));
	}

	/**
	 * Decides one request with arguments built ahead by {@link #arguments}: a route's are the same for
	 * every request, only the keys differ.
	 * @param keys one per limit, sharing one hash tag
	 */
	public Mono<Verdict> decide(List<String> keys, Arguments arguments) {
		byte[][] encoded = new byte[keys.size()][];
		for (int i = 0; i < encoded.length; i++) {
			encoded[i] = keys.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return this.sender.run(encoded, arguments.encoded).map(reply -> Verdict.fromReply(reply, encoded.length));
	}

	/**
	 * Settles a reservation once: each limit gives back what it still holds of {@code reserved - actual}, or
	 * counts {@code actual - reserved} now, even past the limit; a second call with the same markers and id
	 * changes nothing (see {@code settle.lua} and each algorithm's module for what exactly).
	 * @param keys the reservation's keys, one per limit, sharing one hash tag
	 * @param markers the client's settle markers ({@link io.windowlimiter.core.Reservation#markers(long)}), under
	 * the same hash tag: the first call adds {@code id} to them
	 * @param id the reservation's id
	 * @param policies the limits as reserved, in the keys' order
	 * @param resets each limit's reset when it reserved ({@link Decision#resetMillis()}): where the reservation
	 * landed in the algorithm's terms
	 * @param reservedAt the time the decision script reserved at ({@link Verdict#now()})
	 * @param reserved the cost reserved, at least 1
	 * @param actual the actual cost, at least 0 and not {@code reserved}
	 * @param now time in ms since the epoch, or empty for the Redis server's clock
	 */
	public Mono<Settlement> settle(List<String> keys, String markers, String id, List<WindowPolicy> policies,
			List<Long> resets, long reservedAt, long reserved, long actual, String now) {
		if (reserved < 1 || actual < 0 || actual == reserved) {
			throw new IllegalArgumentException("Nothing to settle from " + reserved + " to " + actual);
		}
		return settle(keys, markers, id, policies, resets, reservedAt, Long.toString(reserved), Long.toString(actual),
				now);
	}

	/**
	 * Settles a reservation whose cost differed per limit (an LLM route's tokens and requests): limit i
	 * reserved {@code reserved[i]} and turned out to cost {@code actual[i]}; a limit where the two are equal
	 * is left as it is.
	 */
	public Mono<Settlement> settle(List<String> keys, String markers, String id, List<WindowPolicy> policies,
			List<Long> resets, long reservedAt, long[] reserved, long[] actual, String now) {
		if (reserved.length != keys.size() || actual.length != keys.size()) {
			throw new IllegalArgumentException("One reserved and one actual cost per limit: " + keys.size() + " limits, "
					+ Arrays.toString(reserved) + ", " + Arrays.toString(actual));
		}
		for (int i = 0; i < reserved.length; i++) {
			if (reserved[i] < 1 || actual[i] < 0) {
				throw new IllegalArgumentException("Cannot settle limit " + i + " from " + reserved[i] + " to " + actual[i]);
			}
		}
		return settle(keys, markers, id, policies, resets, reservedAt, joined(reserved), joined(actual), now);
	}

	private static String joined(long[] costs) {
		StringBuilder joined = new StringBuilder(12 * costs.length);
		for (int i = 0; i < costs.length; i++) {
			joined.append((i > 0) ? "," : "").append(costs[i]);
		}
		return joined.toString();
	}

	private Mono<Settlement> settle(List<String> keys, String markers, String id, List<WindowPolicy> policies,
			List<Long> resets, long reservedAt, String reserved, String actual, String now) {
		if (keys.size() != policies.size() || keys.size() != resets.size() || keys.isEmpty()) {
			throw new IllegalArgumentException("One key, policy and reset per limit, at least one: " + keys + ", "
					+ policies + ", " + resets);
		}
		byte[][] encodedKeys = new byte[keys.size() + 2][];
		for (int i = 0; i < keys.size(); i++) {
			encodedKeys[i] = keys.get(i).getBytes(StandardCharsets.UTF_8);
		}
		encodedKeys[keys.size()] = markers.getBytes(StandardCharsets.UTF_8);
		encodedKeys[keys.size() + 1] = RedisKeys.resets(keys.get(0)).getBytes(StandardCharsets.UTF_8);
		List<String> args = new ArrayList<>(6 + 5 * policies.size());
		args.add(now);
		args.add(Integer.toString(policies.size()));
		args.add(Long.toString(reservedAt));
		args.add(reserved);
		args.add(actual);
		for (int i = 0; i < policies.size(); i++) {
			WindowPolicy policy = policies.get(i);
			CalendarPeriod calendar = policy.calendar();
			args.add((calendar != null) ? CALENDAR : policy.algorithm().name());
			args.add(Long.toString(policy.limit()));
			args.add(Long.toString(policy.windowMillis()));
			// a calendar quota's edges around the reservation: the settle script finds the period counting now
			args.add((calendar != null) ? calendar.extra(reservedAt) : policy.algorithm().extra(policy));
			args.add(Long.toString(resets.get(i)));
		}
		args.add(id);
		byte[][] encodedArgs = new byte[args.size()][];
		for (int i = 0; i < encodedArgs.length; i++) {
			encodedArgs[i] = args.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return this.sender.run(this.settle, encodedKeys, encodedArgs)
			.map(reply -> Settlement.fromReply(reply, keys.size()));
	}

	/**
	 * Releases one request's concurrency slots: removes its id from each key's set. Idempotent: a second call
	 * removes nothing.
	 * @param keys the client's keys of the request's concurrency limits, sharing one hash tag
	 * @param requestId the id the decision recorded ({@link Arguments#withRequestId})
	 * @return how many slots were removed
	 */
	/**
	 * Deletes a client's keys (an operator's reset) and notes when, in its resets hash, so that a settle of a
	 * reservation made before leaves those keys alone ({@code reset.lua}).
	 * @param keys the keys to delete, all under one client's hash tag, at least one
	 * @param keepMillis how long the note is kept: the longest window of any limit
	 * @return how many keys were deleted
	 */
	public Mono<Long> reset(List<String> keys, long keepMillis) {
		byte[][] encodedKeys = new byte[keys.size() + 1][];
		encodedKeys[0] = RedisKeys.resets(keys.get(0)).getBytes(StandardCharsets.UTF_8);
		for (int i = 0; i < keys.size(); i++) {
			encodedKeys[i + 1] = keys.get(i).getBytes(StandardCharsets.UTF_8);
		}
		byte[][] args = { Long.toString(keepMillis).getBytes(StandardCharsets.UTF_8) };
		return this.sender.run(this.reset, encodedKeys, args).map(reply -> reply.get(0));
	}

	public Mono<Long> release(List<String> keys, String requestId) {
		byte[][] encodedKeys = new byte[keys.size()][];
		for (int i = 0; i < encodedKeys.length; i++) {
			encodedKeys[i] = keys.get(i).getBytes(StandardCharsets.UTF_8);
		}
		byte[][] args = { requestId.getBytes(StandardCharsets.UTF_8) };
		return this.sender.run(this.release, encodedKeys, args).map(reply -> reply.get(0));
	}

	/**
	 * A call that reaches the node deciding for these keys and changes nothing there: what a stalled guard
	 * tries before it sends a decision (see {@link io.windowlimiter.core.failure.RedisGuard}).
	 */
	public Mono<?> probe(List<String> keys) {
		// asked for with every decision, sent only by a trial: nothing is encoded until then
		return this.sender.probe(keys.get(0));
	}

	/**
	 * What the guard is told of the connections and the cluster's masters: a node whose connection is down is
	 * stalled at once, one no longer a master is forgotten (see {@link RedisGuard#follow}).
	 */
	public RedisGuard.Topology topology() {
		ScriptSender sender = this.sender;
		return new RedisGuard.Topology() {

			@Override
			public boolean isDisconnected(Object node) {
				return sender.isDisconnected(node);
			}

			@Override
			public @Nullable Set<Object> masters() {
				return sender.masters();
			}

			@Override
			public void whenDisconnected(Runnable check) {
				sender.whenDisconnected(check);
			}

		};
	}

	/**
	 * The Redis node that decides for these keys (all share one hash tag): on a cluster the master of their
	 * slot, else {@link io.windowlimiter.core.failure.RedisGuard#ONE_NODE}. For the guard, which judges
	 * each node's progress on its own.
	 */
	public Object nodeOf(List<String> keys) {
		return this.sender.nodeOf(keys.get(0));
	}

	/**
	 * The script's ARGV for these limits (in order, each deciding by its policy's algorithm), this cost
	 * and this time ("" for the Redis clock).
	 */
	public static Arguments arguments(List<WindowPolicy> policies, long cost, String now) {
		return arguments(policies, cost, now, now.isEmpty() ? System.currentTimeMillis() : Long.parseLong(now), 0);
	}

	/** The script's function for a calendar quota, defined by {@code calendar.lua}. */
	static final String CALENDAR = "FIXED_WINDOW_CALENDAR";

	/**
	 * As {@link #arguments(List, long, String)}, with calendar quotas' edges worked out around
	 * {@code edgesAround} (this instance's now, in ms since the epoch): the script picks the period holding
	 * its own now among them; and for a route that holds requests up to {@code maxDelayMillis} (0: none)
	 * instead of refusing them: a later slot is reserved in Redis and the verdict says how long to hold (see
	 * {@code hold.lua}).
	 */
	public static Arguments arguments(List<WindowPolicy> policies, long cost, String now, long edgesAround,
			long maxDelayMillis) {
		List<String> args = new ArrayList<>(4 + 4 * policies.size());
		args.add(now);
		args.add(Long.toString(cost));
		for (WindowPolicy policy : policies) {
			Algorithm algorithm = policy.algorithm();
			CalendarPeriod calendar = policy.calendar();
			args.add((calendar != null) ? CALENDAR : algorithm.name());
			args.add(Long.toString(policy.limit()));
			args.add(Long.toString(policy.windowMillis()));
			args.add((calendar != null) ? calendar.extra(edgesAround) : algorithm.extra(policy));
		}
		if (maxDelayMillis > 0) {
			args.add(Long.toString(maxDelayMillis));
			args.add(Long.toString(maxDelayMillis));
		}
		return new Arguments(args);
	}

	/** The script's ARGV, encoded once: a route's are the same for every request. */
	public static final class Arguments {

		private final List<String> values;

		private final byte[][] encoded;

		private Arguments(List<String> values) {
			this.values = List.copyOf(values);
			this.encoded = new byte[values.size()][];
			for (int i = 0; i < this.encoded.length; i++) {
				this.encoded[i] = values.get(i).getBytes(StandardCharsets.UTF_8);
			}
		}

		/** These arguments with another cost: a request whose cost is its own, not the route's. */
		public Arguments withCost(long cost) {
			List<String> values = new ArrayList<>(this.values);
			values.set(1, Long.toString(cost));
			return new Arguments(values);
		}

		/**
		 * These arguments with a cost per limit, in the limits' order (an LLM route's token limits reserve its
		 * token estimate, its request limits 1), given to the script as one comma-separated argument where the
		 * one cost goes.
		 */
		public Arguments withCosts(long[] costs) {
			for (long cost : costs) {
				if (cost < 1) {
					throw new IllegalArgumentException("A cost per limit is 1 or more: " + Arrays.toString(costs));
				}
			}
			List<String> values = new ArrayList<>(this.values);
			values.set(1, joined(costs));
			return new Arguments(values);
		}

		/**
		 * These arguments with a penalty: each limit's {@code block-for} in ms (0 for none), which the script
		 * reads when the decision's last key is the client's block key.
		 */
		public Arguments withPenalty(List<Long> blockForMillis) {
			List<String> values = new ArrayList<>(this.values);
			values.add(blockForMillis.stream().map(String::valueOf).collect(Collectors.joining(",")));
			return new Arguments(values);
		}

		/**
		 * These arguments for a request that may not be held, on a route that holds (its instance holds all
		 * it may): decided at once, yet still behind the slots others reserved. The same on other routes.
		 */
		public Arguments withoutHold() {
			if (this.values.size() % 4 != 0) {
				return this;
			}
			List<String> values = new ArrayList<>(this.values);
			values.set(values.size() - 1, "0");
			return new Arguments(values);
		}

		/**
		 * These arguments for one request whose concurrency limits record it by {@code requestId}: unique per
		 * request, made by the gateway, never by the client (it is the member of the client's set that the
		 * release removes). The same arguments when no limit counts concurrency.
		 */
		public Arguments withRequestId(String requestId) {
			List<String> values = null;
			String concurrency = Algorithm.CONCURRENCY.name();
			for (int at = 2; at + 3 < this.values.size(); at += 4) {
				if (concurrency.equals(this.values.get(at))) {
					if (values == null) {
						values = new ArrayList<>(this.values);
					}
					values.set(at + 3, requestId);
				}
			}
			return (values != null) ? new Arguments(values) : this;
		}

		/** The arguments as text, in order, e.g. to replay them with redis-cli. */
		public List<String> values() {
			return this.values;
		}

		@Override
		public String toString() {
			return this.values.toString();
		}

	}

	/**
	 * Loads the scripts into Redis ahead of the first request, which also opens the connection: the first
	 * decision then costs one round trip like any other instead of a connect and a NOSCRIPT retry.
	 * @return the decision script's SHA
	 */
	public Mono<String> load() {
		return this.sender.load();
	}

	/** The assembled script, e.g. for tests that run it by hand. */
	public RedisScript<List<Long>> script() {
		return this.script;
	}

	/**
	 * The source without its full-line comments and blank lines: they stay in the .lua files, but Redis
	 * would hash, keep and (on NOSCRIPT) receive them with every load.
	 */
	static String withoutComments(String lua) {
		StringBuilder kept = new StringBuilder(lua.length());
		for (String line : lua.split("\n")) {
			String trimmed = line.strip();
			if (!trimmed.isEmpty() && !trimmed.startsWith("--")) {
				kept.append(line).append('\n');
			}
		}
		return kept.toString();
	}

	private static String read(String file) {
		try (InputStream in = LimitScript.class.getResourceAsStream(file)) {
			if (in == null) {
				throw new IllegalStateException("Script " + file + " is missing beside " + LimitScript.class);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
