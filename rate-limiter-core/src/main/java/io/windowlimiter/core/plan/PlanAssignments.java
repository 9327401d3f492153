package io.windowlimiter.core.plan;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

import io.windowlimiter.core.OccasionalLog;
import io.windowlimiter.core.access.AccessRule;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.core.policy.RouteLimit;
import io.windowlimiter.core.key.RedisKeys;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Plans and overrides assigned to clients at run time, per target (a route id or a scope name) and
 * client key, each for good or until it expires. They live in Redis, one hash for the whole gateway,
 * and every instance holds all of them in memory: a decision looks its client up locally and costs no
 * extra Redis call. Each instance polls a version counter every {@code refreshInterval} and reloads the
 * hash when it changed, so a change takes effect everywhere within that interval plus one reload; the
 * instance that makes a change has it before the returned {@code Mono} completes.
 *
 * <p>Meant for what operators assign by hand or by a tool (thousands of clients, changed now and then),
 * not for every client's plan: that comes from a plan resolver reading the request. Their number
 * is bounded ({@code maxAssignments}); a new one beyond it is refused.
 */
public class PlanAssignments implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(PlanAssignments.class);

	private static final String PLAN = "plan";

	private static final String LIMITS = "limits";

	/** The kind of a block or exemption ({@link AccessRule}), kept beside assignments under fields of their own. */
	private static final String ACCESS = "access";

	/** Leads an access rule's field: a plan's field leads with a digit, so the two never meet. */
	private static final String ACCESS_FIELD = "!";

	private static final List<String> KEYS = List.of(RedisKeys.ASSIGNMENTS, RedisKeys.ASSIGNMENT_EXPIRY,
			RedisKeys.ASSIGNMENT_VERSION);

	/**
	 * The longest an assignment may hold: 10 years. Far longer (thousands of years) would reach expiry times
	 * that Redis's Lua prints in exponent form, which no instance could read back.
	 */
	public static final Duration MAX_TTL = Duration.ofDays(3650);

	/** What the script answers when full. */
	private static final String FULL = "assignments already, the most allowed";

	private final ReactiveStringRedisTemplate redis;

	private final RedisScript<Long> write;

	private final Set<String> plans;

	private final Duration refreshInterval;

	private final long maxAssignments;

	private final LongSupplier clock;

	private final OccasionalLog failureLog;

	private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

	private volatile BiConsumer<String, Assignment> overrideCheck = (target, override) -> {
	};

	private final RedisScript<List> readAll;

	/** The assignments last loaded, with their version; version -1 before the first load. */
	private final AtomicReference<Snapshot> loaded = new AtomicReference<>(
			new Snapshot(-1, Map.of(), Map.of(), 0, Map.of()));

	private volatile CredentialsInClear credentialsInClear = (target, clientKey) -> null;

	/** How many assignments naming a credential in clear were last logged about. */
	private volatile int inClearLogged;

	private volatile @Nullable Disposable polling;

	/**
	 * @param redis where assignments are kept
	 * @param plans the declared plans, the only ones that may be assigned
	 * @param refreshInterval how often to ask Redis whether assignments changed
	 * @param maxAssignments the most assignments kept
	 * @param logInterval at most one log line per this interval when reloading fails
	 * @param clock this instance's clock in ms since the epoch; expiry is checked against it, corrected at each
	 * load by how far it is off the Redis clock that expiry times are on
	 */
	public PlanAssignments(ReactiveStringRedisTemplate redis, Set<String> plans, Duration refreshInterval,
			long maxAssignments, Duration logInterval, LongSupplier clock) {
		this.redis = redis;
		this.plans = Set.copyOf(plans);
		this.refreshInterval = refreshInterval;
		this.maxAssignments = maxAssignments;
		this.failureLog = new OccasionalLog(PlanAssignments.class, logInterval);
		this.clock = clock;
		String script = read("plan_assignments.lua");
		this.write = RedisScript.of(script, Long.class);
		// the same script, called without arguments: the version and the hash in one atomic read
		this.readAll = RedisScript.of(script, List.class);
	}

	/**
	 * Puts the client on a plan on one route, or on every route naming a scope.
	 * @param target a route id or a scope name
	 * @param clientKey the client's key, as the route's key resolver gives it
	 * @param plan a declared plan
	 * @param ttl how long it holds; null for good
	 * @throws IllegalArgumentException if the plan is not declared
	 */
	public Mono<Void> assign(String target, String clientKey, String plan, @Nullable Duration ttl) {
		if (!this.plans.contains(plan)) {
			return Mono.error(new IllegalArgumentException("Plan '" + plan + "' is not declared; declared: "
					+ String.join(", ", this.plans)));
		}
		return write(target, clientKey, PLAN + '\n' + plan, ttl);
	}

	/**
	 * Gives the client limits of its own on one route, or on every route naming a scope, instead of its
	 * plan's or the route's.
	 * @param target a route id or a scope name
	 * @param clientKey the client's key, as the route's key resolver gives it
	 * @param limits one map per limit with the properties of a route's {@code limits[i]}: {@code limit},
	 * {@code window}, optionally {@code algorithm}, {@code log-storage}, {@code burst}, {@code name},
	 * {@code scope}, {@code unit} ({@code tokens} on an LLM route: there an override replaces the client's limits
	 * of the kinds it names and keeps the others)
	 * @param ttl how long it holds; null for good
	 * @throws io.windowlimiter.core.policy.InvalidRouteConfigurationException if a limit is wrong, or below the
	 * cost of a request on a route it applies on
	 */
	public Mono<Void> override(String target, String clientKey, List<? extends Map<String, ?>> limits,
			@Nullable Duration ttl) {
		this.overrideCheck.accept(target, overrideOf(target, limits, 0));
		StringBuilder value = new StringBuilder(LIMITS);
		for (Map<String, ?> limit : limits) {
			StringBuilder line = new StringBuilder();
			limit.forEach((property, setting) -> line.append(line.isEmpty() ? "" : "&")
				.append(encode(property))
				.append('=')
				.append(encode(String.valueOf(setting))));
			value.append('\n').append(line);
		}
		return write(target, clientKey, value.toString(), ttl);
	}

	/** Takes the client's plan or override on the target away: its plan comes from the request again. */
	public Mono<Void> clear(String target, String clientKey) {
		return write(target, clientKey, "", null);
	}

	/** The client's live assignment on the target, from memory; null for none. */
	public @Nullable Assignment find(String target, String clientKey) {
		Snapshot loaded = this.loaded.get();
		Map<String, Assignment> all = loaded.assignments();
		if (all.isEmpty()) {
			return null;
		}
		Assignment assignment = all.get(loaded.field(field(target, clientKey)));
		// expiry times are on the Redis clock: this instance's clock, corrected by how far it was off at the last load
		return (assignment != null && assignment.isLive(this.clock.getAsLong() + loaded.clockOffset())) ? assignment
				: null;
	}

	/**
	 * Blocks the client on one route, or on every route naming a scope: refused with 403 until it ends.
	 * Kept with the assignments (same bound, reload and broadcast), under a field of its own, so a block
	 * leaves the client's plan or override as it was.
	 * @param ttl how long it holds
	 */
	public Mono<Void> block(String target, String clientKey, Duration ttl) {
		return write(ACCESS_FIELD + field(target, clientKey), ACCESS + '\n' + AccessRule.Kind.BLOCK.id(), ttl);
	}

	/**
	 * Exempts the client on one route, or on every route naming a scope: never limited until it ends.
	 * @param ttl how long it holds; null for good (until cleared)
	 */
	public Mono<Void> exempt(String target, String clientKey, @Nullable Duration ttl) {
		return write(ACCESS_FIELD + field(target, clientKey), ACCESS + '\n' + AccessRule.Kind.EXEMPT.id(), ttl);
	}

	/** Lifts the client's block or exemption on the target. */
	public Mono<Void> clearAccess(String target, String clientKey) {
		return write(ACCESS_FIELD + field(target, clientKey), "", null);
	}

	/** Whether any block or exemption is loaded: when none is, a decision looks nothing up. */
	public boolean hasAccessRules() {
		return !this.loaded.get().access().isEmpty();
	}

	/** The client's live block or exemption on exactly this target, from memory; null for none. */
	public @Nullable AccessRule access(String target, String clientKey) {
		Snapshot loaded = this.loaded.get();
		if (loaded.access().isEmpty()) {
			return null;
		}
		AccessRule rule = loaded.access().get(loaded.field(ACCESS_FIELD + field(target, clientKey)));
		return (rule != null && rule.isLive(this.clock.getAsLong() + loaded.clockOffset())) ? rule : null;
	}

	/** Now on the Redis clock that expiry times are on, as this instance last measured it. */
	public long redisNow() {
		return this.clock.getAsLong() + this.loaded.get().clockOffset();
	}

	/**
	 * Checks every override before it is written, beyond its own rules: the limiter checks each against
	 * the cost of the routes it applies on.
	 * @param check throws {@link io.windowlimiter.core.policy.InvalidRouteConfigurationException} to refuse it
	 */
	public void checkOverridesWith(BiConsumer<String, Assignment> check) {
		this.overrideCheck = check;
	}

	/**
	 * Tells how a client named in clear by an assignment is known now, where the core hashes client keys that are
	 * credentials (API keys, tokens): assignments, blocks and exemptions made before those keys were hashed name
	 * the credential as it was, and are found by its hash from then on, as if made under it. The next change an
	 * operator makes to such a client (an assignment, a block, a clear) writes it under the hash and deletes the
	 * field in clear, so the credential leaves Redis. Re-read by {@link #reindex} when the routes change.
	 */
	public void readCredentialsInClearWith(CredentialsInClear credentials) {
		this.credentialsInClear = credentials;
		reindex();
	}

	/** Finds again which assignments name a credential in clear, after the routes (or the hash's secret) changed. */
	public void reindex() {
		Snapshot now;
		do {
			now = this.loaded.get();
		}
		while (!this.loaded.compareAndSet(now, now.withInClear(inClear(now.assignments().keySet(),
				now.access().keySet()))));
		logInClear(this.loaded.get());
	}

	/** How a client key an assignment names in clear is known now; see {@link #readCredentialsInClearWith}. */
	@FunctionalInterface
	public interface CredentialsInClear {

		/** The hash the client is known by on the target, or null when its key is kept as it is (or is a hash). */
		@Nullable String hashOf(String target, String clientKey);

	}

	/** Called after every reload that changed the assignments (e.g. to forget cached denials). */
	public void onChange(Runnable listener) {
		this.listeners.add(listener);
	}

	/**
	 * Reloads the assignments if their version changed since the last load. The version and the hash are read
	 * in one step, decoded off Redis's I/O thread, and installed only if newer than those loaded: a slow read
	 * never replaces what a later one installed.
	 * @return whether assignments were installed
	 */
	public Mono<Boolean> refresh() {
		return this.redis.opsForValue().get(RedisKeys.ASSIGNMENT_VERSION).defaultIfEmpty("").flatMap(current -> {
			if (version(current) == this.loaded.get().version()) {
				return Mono.just(false);
			}
			return this.redis.execute(this.readAll, KEYS, List.of())
				.collectList()
				.publishOn(Schedulers.boundedElastic())
				.map(this::install);
		});
	}

	private boolean install(List<?> reply) {
		// Spring Data Redis hands a multi-bulk reply over whole or element by element, depending on its version
		List<?> all = (reply.size() == 1 && reply.get(0) instanceof List<?> whole) ? whole : reply;
		long version = version(String.valueOf(all.get(0)));
		long clockOffset = Long.parseLong(String.valueOf(all.get(1))) - this.clock.getAsLong();
		if (!isNewer(version, this.loaded.get().version())) {
			return false;
		}
		Map<String, String> entries = new HashMap<>(all.size());
		Map<String, String> access = new HashMap<>();
		for (int i = 2; i + 1 < all.size(); i += 2) {
			String field = String.valueOf(all.get(i));
			(field.startsWith(ACCESS_FIELD) ? access : entries).put(field, String.valueOf(all.get(i + 1)));
		}
		Snapshot snapshot = new Snapshot(version, decode(entries), decodeAccess(access), clockOffset,
				inClear(entries.keySet(), access.keySet()));
		Snapshot before = this.loaded.getAndUpdate(now -> isNewer(version, now.version()) ? snapshot : now);
		if (!isNewer(version, before.version())) {
			return false;
		}
		logInClear(snapshot);
		this.listeners.forEach(Runnable::run);
		return true;
	}

	/**
	 * The fields naming a credential in clear, by the field the same client has under its hash: only where no
	 * field under the hash exists (one made since wins).
	 */
	private Map<String, String> inClear(Set<String> assignments, Set<String> access) {
		Map<String, String> inClear = new HashMap<>();
		for (Set<String> fields : List.of(assignments, access)) {
			for (String field : fields) {
				String lead = field.startsWith(ACCESS_FIELD) ? ACCESS_FIELD : "";
				int colon = field.indexOf(':', lead.length());
				if (colon < 0) {
					continue;
				}
				int length;
				try {
					length = Integer.parseInt(field.substring(lead.length(), colon));
				}
				catch (NumberFormatException ex) {
					continue;
				}
				if (length < 0 || colon + 1 + length > field.length()) {
					continue;
				}
				String target = field.substring(colon + 1, colon + 1 + length);
				String hash = this.credentialsInClear.hashOf(target, field.substring(colon + 1 + length));
				if (hash != null) {
					String hashed = lead + field(target, hash);
					if (!fields.contains(hashed)) {
						inClear.put(hashed, field);
					}
				}
			}
		}
		return inClear.isEmpty() ? Map.of() : Map.copyOf(inClear);
	}

	private void logInClear(Snapshot snapshot) {
		int count = snapshot.inClear().size();
		if (count > 0 && count != this.inClearLogged) {
			logger.warn(count + " rate-limit assignment(s), block(s) or exemption(s) name a client of a route keyed "
					+ "by credentials in clear (made before such keys were hashed): they apply to the client as "
					+ "before; the next change an operator makes to each (or a clear) stores it under the hash and "
					+ "deletes the credential from Redis");
		}
		this.inClearLogged = count;
	}

	/** Newer, or Redis has none at all (its keys were lost): what Redis holds is what holds. */
	private static boolean isNewer(long version, long loaded) {
		return version > loaded || (version == 0 && loaded != 0);
	}

	/** The version as stored, 0 when there is none. */
	private static long version(String stored) {
		return stored.isEmpty() ? 0 : Long.parseLong(stored);
	}

	/**
	 * Assignments as loaded at one version.
	 * @param clockOffset the Redis clock minus this instance's when loaded, in ms (plus the read's latency)
	 * @param inClear the fields naming a credential in clear ({@link #inClear}), by the client's field under its hash
	 */
	private record Snapshot(long version, Map<String, Assignment> assignments, Map<String, AccessRule> access,
			long clockOffset, Map<String, String> inClear) {

		/** The field a client's entry is kept under: its own, else the field in clear it was made under. */
		String field(String field) {
			if (this.inClear.isEmpty()) {
				return field;
			}
			String inClear = this.inClear.get(field);
			return (inClear != null) ? inClear : field;
		}

		Snapshot withInClear(Map<String, String> inClear) {
			return new Snapshot(this.version, this.assignments, this.access, this.clockOffset, inClear);
		}

	}

	private Mono<Void> write(String target, String clientKey, String value, @Nullable Duration ttl) {
		Objects.requireNonNull(target, "target");
		Objects.requireNonNull(clientKey, "clientKey");
		return write(field(target, clientKey), value, ttl);
	}

	private Mono<Void> write(String field, String value, @Nullable Duration ttl) {
		if (ttl != null && ttl.toMillis() < 1) {
			return Mono.error(new IllegalArgumentException("ttl must be at least 1 ms, was " + ttl));
		}
		if (ttl != null && ttl.compareTo(MAX_TTL) > 0) {
			return Mono.error(new IllegalArgumentException("ttl must be at most " + MAX_TTL + " (10 years), was " + ttl));
		}
		// the client's entry made in clear goes once this is written: what is written now (or nothing, a clear)
		// is all that holds for it, and the credential leaves Redis
		String inClear = this.loaded.get().inClear().get(field);
		List<String> args = List.of(field, value, (ttl != null) ? Long.toString(ttl.toMillis()) : "",
				Long.toString(this.maxAssignments));
		// reloaded here before completing, so the caller's own instance has the change at once
		Mono<Void> written = this.redis.execute(this.write, KEYS, args)
			.onErrorMap(ex -> String.valueOf(NestedExceptionUtils.getMostSpecificCause(ex).getMessage()).contains(FULL),
					ex -> new IllegalStateException("Not assigned: " + this.maxAssignments + " assignments already, the "
							+ "most allowed (window-rate-limiter.assignments.max-entries); clear some first", ex))
			.then(refresh())
			.then();
		return (inClear == null) ? written : written.then(Mono.defer(() -> write(inClear, "", null)));
	}

	/** Length-prefixed, so no target and client key can spell another pair's field. */
	private static String field(String target, String clientKey) {
		return target.length() + ":" + target + clientKey;
	}

	private Map<String, Assignment> decode(Map<String, String> entries) {
		Map<String, Assignment> decoded = new HashMap<>(entries.size() * 2);
		entries.forEach((field, value) -> {
			try {
				decoded.put(field, decode(field, value));
			}
			catch (RuntimeException ex) {
				// written by an instance that knows more (a newer version, other plans): skip just this one
				logger.warn("Ignoring rate-limit assignment " + field + ": " + ex.getMessage());
			}
		});
		return Map.copyOf(decoded);
	}

	private static Map<String, AccessRule> decodeAccess(Map<String, String> entries) {
		Map<String, AccessRule> decoded = new HashMap<>(entries.size() * 2);
		entries.forEach((field, value) -> {
			String[] lines = value.split("\n", -1);
			AccessRule.Kind kind = (lines.length == 3 && lines[1].equals(ACCESS)) ? AccessRule.Kind.of(lines[2]) : null;
			if (kind != null) {
				decoded.put(field, new AccessRule(kind, Long.parseLong(lines[0])));
			}
			else {
				logger.warn("Ignoring rate-limit access rule " + field + ": unknown kind");
			}
		});
		return Map.copyOf(decoded);
	}

	private static Assignment decode(String field, String value) {
		String[] lines = value.split("\n", -1);
		long expiresAt = Long.parseLong(lines[0]);
		if (lines[1].equals(PLAN)) {
			return new Assignment(lines[2], List.of(), expiresAt);
		}
		if (!lines[1].equals(LIMITS)) {
			throw new IllegalArgumentException("unknown kind " + lines[1]);
		}
		List<Map<String, String>> limits = new ArrayList<>();
		for (int i = 2; i < lines.length; i++) {
			Map<String, String> limit = new LinkedHashMap<>();
			for (String pair : lines[i].split("&")) {
				String[] parts = pair.split("=", 2);
				limit.put(URLDecoder.decode(parts[0], StandardCharsets.UTF_8),
						URLDecoder.decode(parts[1], StandardCharsets.UTF_8));
			}
			limits.add(limit);
		}
		String target = field.substring(field.indexOf(':') + 1, field.indexOf(':') + 1
				+ Integer.parseInt(field.substring(0, field.indexOf(':'))));
		return overrideOf(target, limits, expiresAt);
	}

	/**
	 * An override as given (the endpoint's body, or stored): its limits checked by the rules of a route's, whether
	 * it is one limit given no name, and which of its limits name no algorithm.
	 * @throws io.windowlimiter.core.policy.InvalidRouteConfigurationException naming the target and property, if
	 * a limit is wrong
	 */
	public static Assignment overrideOf(String target, List<? extends Map<String, ?>> limits, long expiresAt) {
		boolean unnamed = limits.size() == 1 && !limits.get(0).containsKey("name");
		Set<Integer> keepsAlgorithm = new HashSet<>();
		for (int i = 0; i < limits.size(); i++) {
			if (!limits.get(i).containsKey("algorithm")) {
				keepsAlgorithm.add(i);
			}
		}
		return new Assignment(null, PolicyRegistry.overrideLimits(target, limits), expiresAt, unnamed, keepsAlgorithm);
	}

	private static String encode(String text) {
		return URLEncoder.encode(text, StandardCharsets.UTF_8);
	}

	/**
	 * Loads the assignments once before the web server takes requests, so a client held by an override is
	 * held from the first request after a restart; start-up waits for it at most the reload bound, and a
	 * Redis that is away only delays the assignments to the first poll that reaches it. Then polls.
	 */
	@Override
	public void start() {
		Duration bound = this.refreshInterval.multipliedBy(4).plusSeconds(1);
		try {
			// a blocking wait, once, at start-up, as DecisionWarmUp's: nothing is served before it ends
			refresh().block(bound);
		}
		catch (RuntimeException ex) {
			logFailure(ex);
		}
		this.polling = Flux.interval(this.refreshInterval, this.refreshInterval)
			.onBackpressureDrop()
			// bounded, so a Redis that stops answering cannot wedge the polling for good
			.concatMap(tick -> refresh().timeout(bound).onErrorResume(ex -> {
				logFailure(ex);
				return Mono.empty();
			}))
			.subscribe();
	}

	/** Just before the web server's phase, as {@code DecisionWarmUp}. */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE - 2048 - 1; // just before Boot's web server (its START_STOP_LIFECYCLE_PHASE), named so the core needs no web module
	}

	private void logFailure(Throwable ex) {
		this.failureLog.warn(() -> "Could not reload rate-limit plan assignments (" + ex + "); the ones loaded last apply");
	}

	@Override
	public void stop() {
		Disposable polling = this.polling;
		if (polling != null) {
			polling.dispose();
			this.polling = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.polling != null;
	}

	private static String read(String file) {
		// the scripts are packaged beside the algorithm classes
		try (InputStream in = PlanAssignments.class.getResourceAsStream("/io/windowlimiter/core/algorithm/" + file)) {
			if (in == null) {
				throw new IllegalStateException("Script " + file + " is missing");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
