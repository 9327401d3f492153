package io.windowlimiter.core.algorithm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.CommandListenerWriter;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.windowlimiter.core.failure.RedisGuard;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.event.connection.ConnectionDeactivatedEvent;
import io.lettuce.core.output.IntegerListOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandExpiryWriter;
import io.lettuce.core.protocol.DefaultEndpoint;
import io.lettuce.core.protocol.CommandType;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.ThreadExecutorMap;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Sends the decision script (and the settling script) to Redis over the application's Lettuce connection, without a template in
 * between: Spring Data Redis would open and close a connection handle and serialize every argument per
 * call, where here a route's ARGV are encoded once. The commands asked for within one task of a Netty event
 * loop (the requests read in one pass over the sockets) are written together when that task ends: one write
 * and one flush for all of them, as a pipeline would, so a busy gateway makes one system call per batch and
 * Redis reads the batch at once. Asked from any other thread, a command is written at once. A command is made
 * only when its Mono is subscribed, and one cancelled before its batch is written is left out of it. The calls
 * of a mergeable script in one batch (the settles) run as one command (see {@link #merged}), and wait up to
 * {@link #LINGER_NANOS} for a decision's write to go with.
 *
 * <p>The connection is Spring Data Redis's shared byte-array connection (the one {@code RedisTemplate}
 * uses), fetched off the request path on first use and again if it was closed.
 */
final class ScriptSender {

	private static final ByteArrayCodec CODEC = ByteArrayCodec.INSTANCE;

	/** The most calls of a mergeable script run as one: bounds how long one script holds Redis. */
	static final int MAX_MERGED = 16;

	/**
	 * How long the calls of a mergeable script (the settles, which no request waits for) wait on their event loop
	 * for the next decision to go with: one write, one read of Redis's for both, where a settle alone cost Redis a
	 * wake-up, a read and a write of its own (the SSE benchmark's 200-event streams: Redis's CPU per LLM call 77 ->
	 * 62 us). At shutdown Netty drops scheduled tasks: {@link #flushWaiting} writes what waits before that.
	 */
	static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

	/** The probe's script: it reads and writes nothing, and answers a list as the decision script does. */
	private static final byte[] PROBE = "return {1}".getBytes(StandardCharsets.US_ASCII);

	private final LettuceConnectionFactory factory;

	/** The decision script, the first given. */
	private final Script decide;

	/** Every script, loaded ahead by {@link #load}. */
	private final List<Script> scripts;

	private volatile @Nullable StatefulConnection<byte[], byte[]> connection;

	/** Run when a connection of the client goes down (see {@link #whenDisconnected}). */
	private final List<Runnable> onDisconnect = new CopyOnWriteArrayList<>();

	/** Whether the client's events are followed yet: once, with the first connection. */
	private final AtomicBoolean followingEvents = new AtomicBoolean();

	/** The handle the connection came from, when it is a dedicated connection of ours to close. */
	private @Nullable RedisConnection handle;

	/** The commands this event loop's current task asked for; written when the task ends. */
	private final FastThreadLocal<Batch> batches = new FastThreadLocal<>();

	/** Every event loop's batch, for {@link #flushWaiting}. */
	private final Set<Batch> everyBatch = ConcurrentHashMap.newKeySet();

	/** @param scripts the decision script first, then any other this sender runs (settling) */
	ScriptSender(LettuceConnectionFactory factory, Script... scripts) {
		this.factory = factory;
		this.decide = scripts[0];
		this.scripts = List.of(scripts);
	}

	/** One script run by SHA, loaded once more when Redis answers NOSCRIPT. */
	static final class Script {

		private final byte[] sha;

		private final byte[] source;

		/**
		 * Whether several calls may run as one (see {@code ScriptSender.merged}): its KEYS and ARGV are a
		 * segment per call, run in order, and its reply a segment per call of as many numbers as the call has
		 * keys.
		 */
		private final boolean mergeable;

		private volatile @Nullable Mono<String> loading;

		Script(String sha, String source) {
			this(sha, source, false);
		}

		Script(String sha, String source, boolean mergeable) {
			this.sha = sha.getBytes(StandardCharsets.US_ASCII);
			this.source = source.getBytes(StandardCharsets.UTF_8);
			this.mergeable = mergeable;
		}

	}

	/**
	 * Runs the script by SHA. Lazy: the command is made and queued for writing only on subscription, and a
	 * cancel before it is written drops it (Lettuce writes no command that is done), so a decision nobody
	 * waits for sends nothing. When Redis does not know the script (restarted, failed over, flushed), it is
	 * loaded once for all the decisions that met NOSCRIPT meanwhile, and each runs again by SHA.
	 */
	Mono<List<Long>> run(byte[][] keys, byte[][] arguments) {
		return run(this.decide, keys, arguments);
	}

	/** Runs one of this sender's scripts, as {@link #run(byte[][], byte[][])} runs the decision script. */
	Mono<List<Long>> run(Script script, byte[][] keys, byte[][] arguments) {
		return Mono.defer(() -> send(script, keys, arguments))
			.onErrorResume(RedisNoScriptException.class,
					ex -> loaded(script).then(Mono.defer(() -> send(script, keys, arguments))));
	}

	/** One SCRIPT LOAD of the script at a time, shared by every call that met NOSCRIPT while it runs. */
	private Mono<String> loaded(Script script) {
		Mono<String> running = script.loading;
		if (running != null) {
			return running;
		}
		Mono<String> mine = load(script).doFinally(signal -> script.loading = null).cache();
		synchronized (script) {
			if (script.loading == null) {
				script.loading = mine;
				return mine;
			}
			return script.loading;
		}
	}

	/**
	 * The Redis node the key's decisions go to: on a cluster the id of the master of its slot, from the
	 * connection's own view of the slots; else {@link RedisGuard#ONE_NODE}.
	 */
	Object nodeOf(String key) {
		if (this.connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
			RedisClusterNode node = cluster.getPartitions()
				.getPartitionBySlot(SlotHash.getSlot(key.getBytes(StandardCharsets.UTF_8)));
			if (node != null && node.getNodeId() != null) {
				return node.getNodeId();
			}
		}
		return RedisGuard.ONE_NODE;
	}

	/**
	 * Whether the connection decisions for the node go on is known to be down: closed, or Lettuce reconnecting
	 * (it then queues what is written until it is back). False while unknown: before the connection was first
	 * fetched, or a cluster node not connected yet.
	 * @param node as {@link #nodeOf} names it
	 */
	boolean isDisconnected(Object node) {
		StatefulConnection<byte[], byte[]> connection = this.connection;
		if (connection == null) {
			return false;
		}
		if (!(connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)) {
			return !connection.isOpen();
		}
		if (!(node instanceof String id)) {
			return false;
		}
		RedisClusterNode master = cluster.getPartitions().getPartitionByNodeId(id);
		if (master == null || master.getUri() == null) {
			return false;
		}
		CompletableFuture<StatefulRedisConnection<byte[], byte[]>> nodeConnection = cluster
			.getConnectionAsync(master.getUri().getHost(), master.getUri().getPort());
		StatefulRedisConnection<byte[], byte[]> connected = nodeConnection.isDone()
				&& !nodeConnection.isCompletedExceptionally() ? nodeConnection.getNow(null) : null;
		return connected != null && !connected.isOpen();
	}

	/**
	 * The ids of the cluster's masters that serve slots now, in the connection's view of the slots (which follows
	 * failovers with the topology refresh); null when not a cluster or not connected yet.
	 */
	@Nullable Set<Object> masters() {
		if (!(this.connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)) {
			return null;
		}
		Set<Object> masters = new HashSet<>();
		for (RedisClusterNode node : cluster.getPartitions()) {
			if (node.getNodeId() != null && (node.is(RedisClusterNode.NodeFlag.UPSTREAM) || node.is(RedisClusterNode.NodeFlag.MASTER))
					&& !node.getSlots().isEmpty()) {
				masters.add(node.getNodeId());
			}
		}
		return masters;
	}

	/**
	 * Loads every script into Redis (every master of a cluster), which also opens the connection.
	 * @return the decision script's SHA
	 */
	Mono<String> load() {
		Mono<String> decide = load(this.decide);
		for (Script script : this.scripts.subList(1, this.scripts.size())) {
			decide = decide.flatMap(sha -> load(script).thenReturn(sha));
		}
		return decide;
	}

	private Mono<String> load(Script script) {
		return connection().flatMap(connection -> {
			RedisFuture<String> loaded = (connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)
					? cluster.async().scriptLoad(script.source)
					: ((StatefulRedisConnection<byte[], byte[]>) connection).async().scriptLoad(script.source);
			return Mono.fromCompletionStage(loaded);
		});
	}

	/**
	 * A script that only answers, sent where the key's decisions go (a script runs on the master even where
	 * reads go to replicas), lazily as {@link #run}: it shows a node answers again without counting anything,
	 * so the trials of a stalled guard charge no client when a frozen Redis runs them late.
	 */
	Mono<List<Long>> probe(String key) {
		return Mono.defer(() -> send(CommandType.EVAL, PROBE,
				new byte[][] { key.getBytes(StandardCharsets.UTF_8) }, new byte[0][], null));
	}

	private Mono<List<Long>> send(Script script, byte[][] keys, byte[][] arguments) {
		return send(CommandType.EVALSHA, script.sha, keys, arguments, script.mergeable ? script : null);
	}

	private Mono<List<Long>> send(CommandType type, byte[] script, byte[][] keys, byte[][] arguments,
			@Nullable Script mergeable) {
		StatefulConnection<byte[], byte[]> connection = this.connection;
		if (connection == null) {
			return connection().flatMap(fetched -> send(fetched, type, script, keys, arguments, mergeable));
		}
		return send(connection, type, script, keys, arguments, mergeable);
	}

	private Mono<List<Long>> send(StatefulConnection<byte[], byte[]> connection, CommandType type, byte[] script,
			byte[][] keys, byte[][] arguments, @Nullable Script mergeable) {
		Command<byte[], byte[], List<Long>> written = command(type, script, keys, arguments);
		AsyncCommand<byte[], byte[], List<Long>> command = (mergeable != null)
				? new MergeableCall(written, mergeable, keys, arguments) : new AsyncCommand<>(written);
		CompletableFuture<?> node = nodeConnection(connection, keys);
		if (node != null && !node.isDone()) {
			// Lettuce's cluster writer waits for a node's first connect on the thread that writes: on an event
			// loop that stalls every request on it, on Lettuce's own it can wait for itself. So wait here, and
			// write once connected (a cancel meanwhile leaves the shared connect alone and sends nothing)
			return Mono.fromFuture(node, true).then(Mono.defer(() -> {
				enqueue(connection, command);
				return Mono.fromFuture(command);
			}));
		}
		enqueue(connection, command);
		// cancelling the Mono cancels the command: in the batch, or in Lettuce's queue, it is never written
		return Mono.fromFuture(command);
	}

	private static Command<byte[], byte[], List<Long>> command(CommandType type, byte[] script, byte[][] keys,
			byte[][] arguments) {
		CommandArgs<byte[], byte[]> args = new CommandArgs<>(CODEC).add(script).add(keys.length);
		for (byte[] key : keys) {
			args.addKey(key);
		}
		for (byte[] argument : arguments) {
			args.addValue(argument);
		}
		return new ScriptCommand(type, args);
	}

	/** A command of this sender: what {@link ScriptObservationFilter} leaves out of Lettuce's observations. */
	static final class ScriptCommand extends Command<byte[], byte[], List<Long>> {

		ScriptCommand(CommandType type, CommandArgs<byte[], byte[]> args) {
			super(type, new IntegerListOutput<>(CODEC), args);
		}

	}

	private void enqueue(StatefulConnection<byte[], byte[]> connection,
			AsyncCommand<byte[], byte[], List<Long>> command) {
		EventExecutor loop = ThreadExecutorMap.currentExecutor();
		if (loop == null) {
			dispatch(connection, List.of(command));
		}
		else {
			batchOf(loop).add(connection, command);
		}
	}

	/**
	 * On a cluster, the connection to the master of the key's slot, the one Lettuce's writer will use;
	 * null elsewhere, or when no master serves the slot (the writer then fails the command).
	 */
	private static @Nullable CompletableFuture<?> nodeConnection(StatefulConnection<byte[], byte[]> connection,
			byte[][] keys) {
		if (!(connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) || keys.length == 0) {
			return null;
		}
		RedisClusterNode master = cluster.getPartitions().getMasterBySlot(SlotHash.getSlot(keys[0]));
		if (master == null || master.getUri() == null) {
			return null;
		}
		return cluster.getConnectionAsync(master.getUri().getHost(), master.getUri().getPort());
	}

	private Batch batchOf(EventExecutor loop) {
		Batch batch = this.batches.get();
		if (batch == null) {
			batch = new Batch(loop);
			this.batches.set(batch);
			this.everyBatch.add(batch);
		}
		return batch;
	}

	/** Has every event loop write what its batch holds now: the settles waiting for a decision's write. */
	void flushWaiting() {
		for (Batch batch : this.everyBatch) {
			try {
				batch.loop.execute(batch);
			}
			catch (RejectedExecutionException ex) {
				// that loop is gone, and with it what it held
			}
		}
	}

	private void dispatch(StatefulConnection<byte[], byte[]> connection,
			List<AsyncCommand<byte[], byte[], List<Long>>> commands) {
		try {
			connection.dispatch(commands);
		}
		catch (RuntimeException ex) {
			commands.forEach(command -> command.completeExceptionally(ex));
		}
		if (!connection.isOpen() && commands.get(0).isCompletedExceptionally()) {
			forget(connection);
		}
	}

	/**
	 * Drops the connection's socket, keeping the connection: Lettuce reconnects at once and, on a
	 * Sentinel set-up, asks the Sentinels for the primary again. Commands under way are sent again on
	 * the new socket (Lettuce's at-least-once). Does nothing on a cluster connection (it follows
	 * MOVED) or before the first decision.
	 */
	void reconnect() {
		if (this.connection instanceof StatefulRedisConnection<byte[], byte[]> standalone
				&& standalone instanceof RedisChannelHandler<?, ?> handler) {
			RedisChannelWriter writer = handler.getChannelWriter();
			while (true) {
				if (writer instanceof CommandExpiryWriter expiry) {
					writer = expiry.getDelegate();
				}
				else if (writer instanceof CommandListenerWriter listeners) {
					writer = listeners.getDelegate();
				}
				else {
					break;
				}
			}
			if (writer instanceof DefaultEndpoint endpoint) {
				endpoint.disconnect();
			}
		}
	}

	/** Fetched off the request path: the first use of a Spring Data Redis connection may connect. */
	private Mono<StatefulConnection<byte[], byte[]>> connection() {
		return Mono.fromCallable(this::fetch).subscribeOn(Schedulers.boundedElastic());
	}

	/**
	 * Synchronized: concurrent first decisions would each take a connection of their own (with
	 * {@code shareNativeConnection=false} or a pool), and all but one would leak.
	 */
	@SuppressWarnings("unchecked")
	private synchronized StatefulConnection<byte[], byte[]> fetch() {
		StatefulConnection<byte[], byte[]> known = this.connection;
		if (known != null) {
			return known;
		}
		RedisConnection handle = this.factory.getConnection();
		StatefulConnection<byte[], byte[]> fetched;
		try {
			Object commands = handle.getNativeConnection();
			if (commands instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				fetched = (StatefulConnection<byte[], byte[]>) cluster.getStatefulConnection();
			}
			else if (commands instanceof RedisAsyncCommands<?, ?> standalone) {
				fetched = (StatefulConnection<byte[], byte[]>) standalone.getStatefulConnection();
			}
			else {
				throw new IllegalStateException("Not a Lettuce connection: " + commands);
			}
		}
		catch (RuntimeException ex) {
			handle.close();
			throw ex;
		}
		if (this.factory.getShareNativeConnection()) {
			// the shared connection outlives its handles: closing the handle closes nothing we use
			handle.close();
		}
		else {
			// a dedicated (or pooled) connection lives as long as its handle: closed, or returned, when forgotten
			this.handle = handle;
		}
		this.connection = fetched;
		followEvents(fetched);
		return fetched;
	}

	/** Has {@code check} run each time a connection of this client goes down (a cluster's node connections too). */
	void whenDisconnected(Runnable check) {
		this.onDisconnect.add(check);
	}

	/**
	 * Lettuce's event bus tells when a connection goes inactive, before the next decision asks: the guard then
	 * fails what waits on it at once. The deactivation, not the disconnect: Lettuce publishes its
	 * DisconnectedEvent while the connection still reads as open (measured), its ConnectionDeactivatedEvent after.
	 * The bus is the client's, shared by its connections; a disconnect is rare, and a needless check costs a pass
	 * over what is in flight.
	 */
	private void followEvents(StatefulConnection<byte[], byte[]> connection) {
		if (!this.followingEvents.compareAndSet(false, true)) {
			return;
		}
		connection.getResources()
			.eventBus()
			.get()
			.filter(ConnectionDeactivatedEvent.class::isInstance)
			.subscribe(event -> this.onDisconnect.forEach(Runnable::run), error -> {
			});
	}

	/**
	 * Lettuce fails commands at once only on a connection closed for good (a disconnected one queues them
	 * and reconnects); Spring Data Redis closes its shared connection when it resets it. Fetch anew then.
	 */
	private synchronized void forget(StatefulConnection<byte[], byte[]> closed) {
		if (this.connection == closed) {
			this.connection = null;
			RedisConnection handle = this.handle;
			this.handle = null;
			if (handle != null) {
				// ours: closed, or returned to its pool
				handle.close();
			}
		}
	}

	/**
	 * One event loop's commands of its current task, all for one connection, written when the task ends; and the
	 * settles asked in the last {@link #LINGER_NANOS}, written with the next decision or when that time is up.
	 */
	private final class Batch implements Runnable {

		private final EventExecutor loop;

		private List<AsyncCommand<byte[], byte[], List<Long>>> commands = new ArrayList<>();

		private @Nullable StatefulConnection<byte[], byte[]> connection;

		/** A run is queued for the end of the current task. */
		private boolean queued;

		/** A run is scheduled for when the oldest waiting settle's linger ends. */
		private boolean lingering;

		private int mergeable;

		private final Runnable lingerEnds = () -> {
			this.lingering = false;
			run();
		};

		Batch(EventExecutor loop) {
			this.loop = loop;
		}

		void add(StatefulConnection<byte[], byte[]> connection, AsyncCommand<byte[], byte[], List<Long>> command) {
			if (this.connection != null && this.connection != connection) {
				// the connection was fetched anew in this task: what is queued goes to the old one first
				run();
			}
			this.connection = connection;
			this.commands.add(command);
			boolean waits = command instanceof MergeableCall && ++this.mergeable < MAX_MERGED
					&& !this.loop.isShuttingDown();
			if (this.queued) {
				return;
			}
			try {
				if (!waits) {
					this.queued = true;
					this.loop.execute(this);
				}
				else if (!this.lingering) {
					this.lingering = true;
					this.loop.schedule(this.lingerEnds, LINGER_NANOS, TimeUnit.NANOSECONDS);
				}
			}
			catch (RejectedExecutionException ex) {
				// the loop is shutting down: write now rather than never
				run();
			}
		}

		@Override
		public void run() {
			this.queued = false;
			this.mergeable = 0;
			List<AsyncCommand<byte[], byte[], List<Long>>> commands = this.commands;
			StatefulConnection<byte[], byte[]> connection = this.connection;
			if (commands.isEmpty() || connection == null) {
				return;
			}
			// Lettuce encodes the list later, on its own thread: hand it over and start a new one
			this.commands = new ArrayList<>();
			this.connection = null;
			// a decision given up in this task (stalled, cancelled) sends nothing
			commands.removeIf(AsyncCommand::isDone);
			if (!commands.isEmpty()) {
				dispatch(connection, merged(connection, commands));
			}
		}

	}

	/**
	 * The commands with the calls of a mergeable script (the settles) run as one command for up to
	 * {@value #MAX_MERGED} calls, after the others: a busy gateway ends several LLM calls in one pass over its
	 * sockets, and one command for them saves Lettuce's work per command and Redis's per script call. Not on a
	 * cluster, where their keys hash to different slots.
	 */
	private static List<AsyncCommand<byte[], byte[], List<Long>>> merged(StatefulConnection<byte[], byte[]> connection,
			List<AsyncCommand<byte[], byte[], List<Long>>> commands) {
		if (commands.size() < 2 || connection instanceof StatefulRedisClusterConnection<?, ?>) {
			return commands;
		}
		List<AsyncCommand<byte[], byte[], List<Long>>> merged = new ArrayList<>(commands.size());
		Map<Script, List<MergeableCall>> calls = new LinkedHashMap<>();
		for (AsyncCommand<byte[], byte[], List<Long>> command : commands) {
			if (command instanceof MergeableCall call) {
				calls.computeIfAbsent(call.script, script -> new ArrayList<>()).add(call);
			}
			else {
				merged.add(command);
			}
		}
		for (List<MergeableCall> group : calls.values()) {
			for (int from = 0; from < group.size(); from += MAX_MERGED) {
				List<MergeableCall> part = group.subList(from, Math.min(group.size(), from + MAX_MERGED));
				merged.add((part.size() == 1) ? part.get(0) : MergeableCall.asOne(part));
			}
		}
		return merged;
	}

	/** A call of a mergeable script, kept apart until its batch is written. */
	private static final class MergeableCall extends AsyncCommand<byte[], byte[], List<Long>> {

		private final Script script;

		private final byte[][] keys;

		private final byte[][] arguments;

		MergeableCall(Command<byte[], byte[], List<Long>> command, Script script, byte[][] keys, byte[][] arguments) {
			super(command);
			this.script = script;
			this.keys = keys;
			this.arguments = arguments;
		}

		/**
		 * One command that runs the calls in order and completes each with its part of the reply. It is
		 * cancelled (Lettuce then never writes it) once every call was: a call given up is sent no more than
		 * before, merged or not.
		 */
		static AsyncCommand<byte[], byte[], List<Long>> asOne(List<MergeableCall> calls) {
			List<byte[]> keys = new ArrayList<>();
			List<byte[]> arguments = new ArrayList<>();
			for (MergeableCall call : calls) {
				keys.addAll(Arrays.asList(call.keys));
				arguments.addAll(Arrays.asList(call.arguments));
			}
			AsyncCommand<byte[], byte[], List<Long>> merged = new AsyncCommand<>(command(CommandType.EVALSHA,
					calls.get(0).script.sha, keys.toArray(new byte[0][]), arguments.toArray(new byte[0][])));
			merged.whenComplete((reply, error) -> split(calls, reply, error));
			AtomicInteger open = new AtomicInteger(calls.size());
			for (MergeableCall call : calls) {
				call.whenComplete((reply, error) -> {
					if (call.isCancelled() && open.decrementAndGet() == 0) {
						merged.cancel(true);
					}
				});
			}
			return merged;
		}

		private static void split(List<MergeableCall> calls, @Nullable List<Long> reply, @Nullable Throwable error) {
			if (error != null || reply == null) {
				Throwable cause = (error instanceof CompletionException && error.getCause() != null) ? error.getCause()
						: error;
				for (MergeableCall call : calls) {
					call.completeExceptionally((cause != null) ? cause : new IllegalStateException("No reply"));
				}
				return;
			}
			int at = 0;
			for (MergeableCall call : calls) {
				int size = call.keys.length;
				if (at + size > reply.size()) {
					call.completeExceptionally(new IllegalStateException(
							"Expected " + size + " numbers from position " + at + " of a merged reply, got " + reply));
				}
				else {
					call.complete(new ArrayList<>(reply.subList(at, at + size)));
				}
				at += size;
			}
		}

	}

}
