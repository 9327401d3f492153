package io.windowlimiter.gateway.plan;

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
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import io.windowlimiter.gateway.PolicyRegistry;
import io.windowlimiter.gateway.key.RedisKeys;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

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
 * not for every client's plan: that comes from a {@link PlanResolver} reading the request. Their number
 * is bounded ({@code maxAssignments}); a new one beyond it is refused.
 */
public class PlanAssignments implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(PlanAssignments.class);

	private static final String PLAN = "plan";

	private static final String LIMITS = "limits";

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

	private final Duration logInterval;

	private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

	private final AtomicLong lastFailureLogged = new AtomicLong(Long.MIN_VALUE);

	private volatile Map<String, Assignment> assignments = Map.of();

	/** The version last loaded; null before the first load. */
	private volatile @Nullable String version;

	private volatile @Nullable Disposable polling;

	/**
	 * @param redis where assignments are kept
	 * @param plans the declared plans, the only ones that may be assigned
	 * @param refreshInterval how often to ask Redis whether assignments changed
	 * @param maxAssignments the most assignments kept
	 * @param logInterval at most one log line per this interval when reloading fails
	 * @param clock this instance's clock in ms since the epoch, which expiry is checked against
	 */
	public PlanAssignments(ReactiveStringRedisTemplate redis, Set<String> plans, Duration refreshInterval,
			long maxAssignments, Duration logInterval, LongSupplier clock) {
		this.redis = redis;
		this.plans = Set.copyOf(plans);
		this.refreshInterval = refreshInterval;
		this.maxAssignments = maxAssignments;
		this.logInterval = logInterval;
		this.clock = clock;
		this.write = RedisScript.of(read("plan_assignments.lua"), Long.class);
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
	 * {@code scope}
	 * @param ttl how long it holds; null for good
	 * @throws io.windowlimiter.gateway.InvalidRouteConfigurationException if a limit is wrong
	 */
	public Mono<Void> override(String target, String clientKey, List<? extends Map<String, ?>> limits,
			@Nullable Duration ttl) {
		PolicyRegistry.overrideLimits(target, limits);
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
		Map<String, Assignment> all = this.assignments;
		if (all.isEmpty()) {
			return null;
		}
		Assignment assignment = all.get(field(target, clientKey));
		return (assignment != null && assignment.isLive(this.clock.getAsLong())) ? assignment : null;
	}

	/** Called after every reload that changed the assignments (e.g. to forget cached denials). */
	public void onChange(Runnable listener) {
		this.listeners.add(listener);
	}

	/** Reloads the assignments if their version changed since the last load. */
	public Mono<Boolean> refresh() {
		return this.redis.opsForValue().get(RedisKeys.ASSIGNMENT_VERSION).defaultIfEmpty("").flatMap(current -> {
			if (current.equals(this.version)) {
				return Mono.just(false);
			}
			return this.redis.<String, String>opsForHash()
				.entries(RedisKeys.ASSIGNMENTS)
				.collectMap(entry -> entry.getKey(), entry -> entry.getValue())
				.map(entries -> {
					this.assignments = decode(entries);
					this.version = current;
					this.listeners.forEach(Runnable::run);
					return true;
				});
		});
	}

	private Mono<Void> write(String target, String clientKey, String value, @Nullable Duration ttl) {
		Objects.requireNonNull(target, "target");
		Objects.requireNonNull(clientKey, "clientKey");
		if (ttl != null && ttl.toMillis() < 1) {
			return Mono.error(new IllegalArgumentException("ttl must be at least 1 ms, was " + ttl));
		}
		if (ttl != null && ttl.compareTo(MAX_TTL) > 0) {
			return Mono.error(new IllegalArgumentException("ttl must be at most " + MAX_TTL + " (10 years), was " + ttl));
		}
		List<String> keys = List.of(RedisKeys.ASSIGNMENTS, RedisKeys.ASSIGNMENT_EXPIRY, RedisKeys.ASSIGNMENT_VERSION);
		List<String> args = List.of(field(target, clientKey), value, (ttl != null) ? Long.toString(ttl.toMillis()) : "",
				Long.toString(this.maxAssignments));
		// reloaded here before completing, so the caller's own instance has the change at once
		return this.redis.execute(this.write, keys, args)
			.onErrorMap(ex -> String.valueOf(NestedExceptionUtils.getMostSpecificCause(ex).getMessage()).contains(FULL),
					ex -> new IllegalStateException("Not assigned: " + this.maxAssignments + " assignments already, the "
							+ "most allowed (window-rate-limiter.assignments.max-entries); clear some first", ex))
			.then(refresh())
			.then();
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
		boolean unnamed = limits.size() == 1 && !limits.get(0).containsKey("name");
		return new Assignment(null, PolicyRegistry.overrideLimits(target, limits), expiresAt, unnamed);
	}

	private static String encode(String text) {
		return URLEncoder.encode(text, StandardCharsets.UTF_8);
	}

	@Override
	public void start() {
		Duration bound = this.refreshInterval.multipliedBy(4).plusSeconds(1);
		this.polling = Flux.interval(Duration.ZERO, this.refreshInterval)
			.onBackpressureDrop()
			// bounded, so a Redis that stops answering cannot wedge the polling for good
			.concatMap(tick -> refresh().timeout(bound).onErrorResume(ex -> {
				logFailure(ex);
				return Mono.empty();
			}))
			.subscribe();
	}

	private void logFailure(Throwable ex) {
		long now = System.nanoTime();
		long last = this.lastFailureLogged.get();
		if ((last == Long.MIN_VALUE || now - last >= this.logInterval.toNanos())
				&& this.lastFailureLogged.compareAndSet(last, now)) {
			logger.warn("Could not reload rate-limit plan assignments (" + ex + "); the ones loaded last apply");
		}
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
		try (InputStream in = PlanAssignments.class.getResourceAsStream("/io/windowlimiter/gateway/algorithm/" + file)) {
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
