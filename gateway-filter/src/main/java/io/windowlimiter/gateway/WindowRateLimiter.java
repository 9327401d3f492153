package io.windowlimiter.gateway;

import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.Timer;
import io.windowlimiter.gateway.RateLimitMetrics.Outcome;
import io.windowlimiter.gateway.algorithm.Algorithm;
import io.windowlimiter.gateway.algorithm.Decision;
import io.windowlimiter.gateway.algorithm.LimitScript;
import io.windowlimiter.gateway.algorithm.Verdict;
import io.windowlimiter.gateway.algorithm.WindowAlgorithm;
import io.windowlimiter.gateway.algorithm.WindowPolicy;
import io.windowlimiter.gateway.failure.FailMode;
import io.windowlimiter.gateway.failure.LocalWindowLimiter;
import io.windowlimiter.gateway.failure.RedisGuard;
import io.windowlimiter.gateway.key.RedisKeys;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;

/**
 * The gateway's {@code RateLimiter}. Per route it reads the {@code window-rate-limiter.*} arguments of
 * the {@code RequestRateLimiter} filter into a {@link RoutePolicy} (see {@link RouteArgs}): when the
 * gateway builds a route from properties, or from {@link #register} for a route built in Java. Per request
 * it builds the client's keys, has one script decide all of the route's limits (through the
 * {@link RedisGuard}) and turns the verdict into headers; a client Redis has denied is answered from
 * the {@link DenyCache}, and when Redis cannot decide the route's {@link FailMode} answers.
 */
public class WindowRateLimiter extends AbstractRateLimiter<WindowRateLimiter.Config> {

	/** The bean name, as used in route config: {@code rate-limiter: "#{@windowRateLimiter}"}. */
	public static final String BEAN_NAME = "windowRateLimiter";

	/** The prefix of this limiter's arguments of the {@code RequestRateLimiter} filter. */
	public static final String CONFIGURATION_PROPERTY_NAME = "window-rate-limiter";

	private static final String REDIS_CLOCK = "";

	/** Fail-mode closed: denied, retry in a second, when Redis may well be back. */
	private static final Decision CLOSED_DENIAL = new Decision(false, 0, 1_000, 1_000);

	private final Map<Algorithm, WindowAlgorithm> algorithms = new EnumMap<>(Algorithm.class);

	private final LimitScript script;

	private final Map<String, Route> routes = new ConcurrentHashMap<>();

	/** Routes given their limits by {@link #register}, each at most once. */
	private final Set<String> registered = ConcurrentHashMap.newKeySet();

	private final RedisGuard guard;

	private final DenyCache denyCache;

	private final LocalWindowLimiter localLimiter;

	private final RateLimitHeaders headers;

	private final RateLimitMetrics metrics;

	private final boolean problemDetails;

	private final Clock clock;

	private volatile DenialListener denialListener = DenialListener.NONE;

	/**
	 * @param script decides the limits; built from the same {@code algorithms}
	 * @param algorithms the algorithms routes may use
	 * @param guard bounds every Redis call (timeout, circuit breaker)
	 * @param denyCache answers clients Redis has denied, until their denial ends
	 * @param localLimiter decides for routes in fail-mode {@code local} while Redis is away
	 * @param headers which headers to send, under which names
	 * @param metrics where to count answers
	 * @param problemDetails whether to mark refused requests for a problem-details body
	 * @param clock this instance's clock, used only by the local limiter
	 */
	public WindowRateLimiter(LimitScript script, List<? extends WindowAlgorithm> algorithms, RedisGuard guard,
			DenyCache denyCache, LocalWindowLimiter localLimiter, RateLimitHeaders headers, RateLimitMetrics metrics,
			boolean problemDetails, Clock clock) {
		super(Config.class, CONFIGURATION_PROPERTY_NAME, null);
		algorithms.forEach(algorithm -> this.algorithms.put(algorithm.algorithm(), algorithm));
		this.script = script;
		this.guard = guard;
		this.denyCache = denyCache;
		this.localLimiter = localLimiter;
		this.headers = headers;
		this.metrics = metrics;
		this.problemDetails = problemDetails;
		this.clock = clock;
	}

	/** A limiter with every algorithm, default headers, no metrics and no problem details. */
	public static WindowRateLimiter of(List<? extends WindowAlgorithm> algorithms, LimitScript script,
			RedisGuard guard, DenyCache denyCache, LocalWindowLimiter localLimiter, Clock clock) {
		return new WindowRateLimiter(script, algorithms, guard, denyCache, localLimiter,
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), RateLimitMetrics.NONE, false, clock);
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		Route route = routeOf(routeId);
		if (route == null) {
			return Mono.error(new IllegalStateException("Route '" + routeId + "' uses " + BEAN_NAME + " without "
					+ CONFIGURATION_PROPERTY_NAME + ".limit and " + CONFIGURATION_PROPERTY_NAME + ".window"));
		}
		List<String> keys = route.keysFor(routeId, id);
		String cacheKey = keys.get(0);
		DenyCache.Denial denial = route.policy.shadow() ? null : this.denyCache.denial(cacheKey);
		if (denial != null) {
			this.metrics.decision(routeId, route.algorithms, Outcome.DENIED);
			this.denialListener.denied(routeId, id);
			// not Mono.just: see ReadyAnswer (a Reactor Netty keep-alive hang)
			return ReadyAnswer.of(answer(route, route.limits, denial.limitIndex(), denial.decision()));
		}
		Timer.Sample sample = this.metrics.startRedis();
		return this.guard.protect(this.script.decide(keys, route.arguments))
			.doOnNext(verdict -> this.metrics.stopRedis(sample, routeId, true))
			.doOnError(error -> this.metrics.stopRedis(sample, routeId, false))
			.map(verdict -> answer(routeId, id, route, cacheKey, verdict))
			.onErrorResume(error -> ReadyAnswer.of(whenRedisFails(routeId, route, keys)));
	}

	private Response answer(String routeId, String id, Route route, String cacheKey, Verdict verdict) {
		int reported = verdict.reported();
		if (!verdict.allowed() && !route.policy.shadow()) {
			this.denyCache.remember(cacheKey, reported, verdict.retryAfterMillis());
		}
		if (!verdict.allowed()) {
			this.denialListener.denied(routeId, id);
		}
		Outcome outcome = verdict.allowed() ? Outcome.ALLOWED : route.policy.shadow() ? Outcome.SHADOWED : Outcome.DENIED;
		this.metrics.decision(routeId, route.algorithms, outcome);
		List<String> violated = verdict.denying().stream().map(i -> route.policy.limits().get(i).name()).toList();
		return answer(route, route.limits, reported, verdict.reportedDecision(), verdict.allowed(), violated);
	}

	/**
	 * @param violated the names of the limits that refused the request, for a problem-details body; empty
	 * when the refusal is not about quota (fail-mode closed)
	 */
	private Response answer(Route route, Limits limits, int reported, Decision decision, boolean allowed,
			List<String> violated) {
		boolean blocked = !allowed && !route.policy.shadow();
		Map<String, String> headers = this.headers.of(limits.policyHeader(), limits.list().get(reported), decision,
				blocked);
		if (blocked && this.problemDetails && !violated.isEmpty()) {
			headers.put(ProblemDetailsFilter.VIOLATED, ProblemDetailsFilter.mark(violated));
		}
		return new Response(!blocked, headers);
	}

	private Response answer(Route route, Limits limits, int reported, Decision decision) {
		List<String> violated = decision.allowed() ? List.of() : List.of(limits.list().get(reported).name());
		return answer(route, limits, reported, decision, decision.allowed(), violated);
	}

	private Response whenRedisFails(String routeId, Route route, List<String> keys) {
		return switch (route.policy.failMode()) {
			case OPEN -> {
				this.metrics.decision(routeId, route.algorithms, Outcome.ERROR);
				yield new Response(true, Map.of());
			}
			case CLOSED -> {
				this.metrics.decision(routeId, route.algorithms, Outcome.FALLBACK);
				yield answer(route, route.limits, 0, CLOSED_DENIAL, false, List.of());
			}
			case LOCAL -> {
				this.metrics.decision(routeId, route.algorithms, Outcome.FALLBACK);
				yield local(route, keys);
			}
		};
	}

	/** Each limit's share for this instance, in memory, reported as such; stops at the first that denies. */
	private Response local(Route route, List<String> keys) {
		List<RouteLimit> shares = route.shares.list();
		Decision closest = null;
		int reported = 0;
		for (int i = 0; i < keys.size(); i++) {
			WindowPolicy share = shares.get(i).policy();
			Decision decision = this.localLimiter.decide(keys.get(i), share.limit(), share.window(),
					route.policy.cost(), this.clock.millis());
			if (!decision.allowed()) {
				return answer(route, route.shares, i, decision);
			}
			if (closest == null || decision.remaining() < closest.remaining()) {
				closest = decision;
				reported = i;
			}
		}
		return answer(route, route.shares, reported, closest);
	}

	/** The route's own policy, else one set on the gateway's default filters. */
	private @Nullable Route routeOf(String routeId) {
		Route route = this.routes.get(routeId);
		return (route != null) ? route : this.routes.get(RouteDefinitionRouteLocator.DEFAULT_FILTERS);
	}

	/** Called for every filter's arguments when routes are built; a bad config fails that route. */
	@Override
	public void onApplicationEvent(FilterArgsEvent event) {
		Map<String, Object> args = event.getArgs();
		if (!RouteArgs.appliesTo(args)) {
			return;
		}
		configure(event.getRouteId(), args);
	}

	/**
	 * Gives a route built with the Java DSL ({@code RouteLocatorBuilder}) its limits, which routes from
	 * properties get when the gateway builds them: DSL routes publish no filter arguments, so without this
	 * every request of such a route fails. The arguments are those of a route's {@code RequestRateLimiter}
	 * filter in YAML ({@code window-rate-limiter.limit}, {@code window-rate-limiter.window} ...; the
	 * {@code window-rate-limiter.} prefix may be left out), checked by the same rules with the same messages.
	 * Use it where the DSL route sets its limiter:
	 * <pre>{@code
	 * .filters(f -> f.requestRateLimiter(c -> c
	 *     .setRateLimiter(windowRateLimiter.register("orders", Map.of("limit", 100, "window", "1m")))
	 *     .setKeyResolver(headerKeyResolver)))
	 * }</pre>
	 * @param routeId the id the DSL route is built with
	 * @param args the limiter's arguments, values as text or numbers
	 * @return this limiter, for {@code setRateLimiter}
	 * @throws InvalidRouteConfigurationException if an argument is wrong, or the route was registered before
	 * (one {@code RequestRateLimiter} filter with this limiter per route)
	 */
	public WindowRateLimiter register(String routeId, Map<String, ?> args) {
		Map<String, Object> prefixed = new LinkedHashMap<>();
		args.forEach((name, value) -> prefixed.put(name.startsWith(RouteArgs.PREFIX) ? name : RouteArgs.PREFIX + name,
				value));
		if (this.registered.contains(routeId)) {
			throw new InvalidRouteConfigurationException(routeId, StartupRouteCheck.FILTER_NAME + " with " + BEAN_NAME,
					"is registered twice", StartupRouteCheck.ONE_PER_ROUTE);
		}
		configure(routeId, prefixed);
		this.registered.add(routeId);
		return this;
	}

	/** Makes the route's policy from its arguments; a bad argument fails the route. */
	private void configure(String routeId, Map<String, Object> args) {
		RoutePolicy policy = RouteArgs.parse(routeId, args);
		List<WindowAlgorithm> implementations = new ArrayList<>();
		for (RouteLimit limit : policy.limits()) {
			WindowAlgorithm algorithm = this.algorithms.get(limit.policy().algorithm());
			if (algorithm == null) {
				throw new IllegalStateException("Route '" + routeId + "' uses " + limit.policy().algorithm()
						+ ", which this limiter was built without");
			}
			implementations.add(algorithm);
		}
		getConfig().put(routeId, new Config(args));
		Route previous = this.routes.put(routeId, new Route(policy, implementations));
		if (previous == null || !previous.policy.equals(policy)) {
			// denials given under the old limits say nothing about the new ones
			this.denyCache.clear();
		}
	}

	/** The policy the given route arguments make, or an {@link InvalidRouteConfigurationException}. */
	public static RoutePolicy policyFor(String routeId, Map<String, ?> args) {
		return RouteArgs.parse(routeId, args);
	}

	// For operators (io.windowlimiter.gateway.operations): routes, and one client's standing, off the decision path.

	/** Every route given limits, by route id ({@code defaultFilters} for the gateway's default filters). */
	public Map<String, RoutePolicy> policies() {
		Map<String, RoutePolicy> policies = new TreeMap<>();
		this.routes.forEach((routeId, route) -> policies.put(routeId, route.policy));
		return policies;
	}

	/** The policy requests of the route are decided by (its own, else the default filters'), or null. */
	public @Nullable RoutePolicy policyOf(String routeId) {
		Route route = routeOf(routeId);
		return (route != null) ? route.policy : null;
	}

	/**
	 * The client's standing on each of the route's limits now, read by the decision script at cost 0, so
	 * reading spends nothing. Empty when the route has no limits here.
	 */
	public Mono<Verdict> peek(String routeId, String clientKey) {
		Route route = routeOf(routeId);
		if (route == null) {
			return Mono.empty();
		}
		return this.guard.protect(this.script.decide(route.keysFor(routeId, clientKey), route.peekArguments));
	}

	/** The Redis keys holding the client's counts on the route, one per limit; empty when it has no limits. */
	public List<String> keysOf(String routeId, String clientKey) {
		Route route = routeOf(routeId);
		return (route != null) ? route.keysFor(routeId, clientKey) : List.of();
	}

	/** Forgets this instance's cached denial of the client on the route: Redis decides its next request. */
	public void forgetDenial(String routeId, String clientKey) {
		List<String> keys = keysOf(routeId, clientKey);
		if (!keys.isEmpty()) {
			this.denyCache.forget(keys.get(0));
		}
	}

	/**
	 * Tells {@code listener} of every request refused by a limit (or that would be, on a shadow route), e.g.
	 * to find the clients denied most. It runs on the decision path: it must be quick and must not throw.
	 */
	public void setDenialListener(DenialListener listener) {
		this.denialListener = listener;
	}

	/** Told of each request refused by a limit; see {@link #setDenialListener}. */
	@FunctionalInterface
	public interface DenialListener {

		/** Tells nobody. */
		DenialListener NONE = (routeId, clientKey) -> {
		};

		/** A request of {@code clientKey} on route {@code routeId} was refused. */
		void denied(String routeId, String clientKey);

	}

	/** Limits as reported to clients, with their policy header, which is the same for every answer. */
	private record Limits(List<RouteLimit> list, String policyHeader) {

		Limits(List<RouteLimit> list) {
			this(list, RateLimitHeaders.policy(list));
		}

	}

	/** A route's policy with what each request needs of it worked out once. */
	private static final class Route {

		final RoutePolicy policy;

		final List<WindowAlgorithm> implementations;

		/** The script's ARGV, the same for every request of the route. */
		final List<String> arguments;

		/** The ARGV of a read: cost 0, nothing recorded. */
		final List<String> peekArguments;

		final Limits limits;

		/** This instance's share of each limit (limit / instances, at least 1), for fail-mode local. */
		final Limits shares;

		/** The metrics tag: the route's algorithms, e.g. {@code fixed-window+sliding-log}. */
		final String algorithms;

		Route(RoutePolicy policy, List<WindowAlgorithm> implementations) {
			this.policy = policy;
			this.implementations = implementations;
			List<WindowPolicy> policies = policy.limits().stream().map(RouteLimit::policy).toList();
			this.arguments = LimitScript.arguments(implementations, policies, policy.cost(), REDIS_CLOCK);
			this.peekArguments = LimitScript.arguments(implementations, policies, 0, REDIS_CLOCK);
			this.limits = new Limits(policy.limits());
			List<RouteLimit> shares = new ArrayList<>(policies.size());
			for (RouteLimit limit : policy.limits()) {
				WindowPolicy own = limit.policy();
				long share = Math.max(1, own.limit() / policy.instances());
				shares.add(new RouteLimit(limit.name(), new WindowPolicy(own.algorithm(), share, own.window())));
			}
			this.shares = new Limits(List.copyOf(shares));
			this.algorithms = policy.limits()
				.stream()
				.map(limit -> limit.policy().algorithm().id())
				.distinct()
				.collect(Collectors.joining("+"));
		}

		List<String> keysFor(String routeId, String clientKey) {
			List<String> keys = new ArrayList<>(this.implementations.size());
			for (int i = 0; i < this.implementations.size(); i++) {
				String suffix = this.implementations.get(i).keySuffix();
				// the first limit's key has no index, so a route's keys stay put when it gains a limit
				keys.add(RedisKeys.of(routeId, clientKey, (i == 0) ? suffix : suffix + i));
			}
			return keys;
		}

	}

	/** One route's limiter arguments as written, e.g. {@code window-rate-limiter.limit: 100}. */
	public static class Config {

		private final Map<String, Object> args;

		public Config() {
			this(Map.of());
		}

		Config(Map<String, Object> args) {
			this.args = Map.copyOf(args.entrySet()
				.stream()
				.filter(arg -> arg.getKey().startsWith(RouteArgs.PREFIX) && arg.getValue() != null)
				.collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
		}

		public Map<String, Object> getArgs() {
			return this.args;
		}

		@Override
		public String toString() {
			return "Config" + this.args;
		}

	}

}
