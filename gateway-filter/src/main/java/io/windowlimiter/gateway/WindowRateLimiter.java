package io.windowlimiter.gateway;

import java.time.Clock;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.windowlimiter.gateway.algorithm.Algorithm;
import io.windowlimiter.gateway.algorithm.Decision;
import io.windowlimiter.gateway.algorithm.WindowAlgorithm;
import io.windowlimiter.gateway.algorithm.WindowPolicy;
import io.windowlimiter.gateway.failure.FailMode;
import io.windowlimiter.gateway.failure.LocalWindowLimiter;
import io.windowlimiter.gateway.failure.RedisGuard;
import io.windowlimiter.gateway.key.RedisKeys;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;

/**
 * The gateway's {@code RateLimiter}: per route it turns the {@code window-rate-limiter.*} arguments of
 * the {@code RequestRateLimiter} filter into a {@link WindowPolicy}, and per request it builds the
 * client's key, asks the route's algorithm (through the {@link RedisGuard}) and turns the decision
 * into headers; when Redis cannot decide, the route's {@link FailMode} answers instead.
 */
public class WindowRateLimiter extends AbstractRateLimiter<WindowRateLimiter.Config> {

	/** The bean name, as used in route config: {@code rate-limiter: "#{@windowRateLimiter}"}. */
	public static final String BEAN_NAME = "windowRateLimiter";

	/** The prefix of this limiter's arguments of the {@code RequestRateLimiter} filter. */
	public static final String CONFIGURATION_PROPERTY_NAME = "window-rate-limiter";

	/** Fail-mode closed: denied, retry in a second, when Redis may well be back. */
	private static final Decision CLOSED_DENIAL = new Decision(false, 0, 1_000, 1_000);

	private final Map<Algorithm, WindowAlgorithm> algorithms = new EnumMap<>(Algorithm.class);

	private final Map<String, RoutePolicy> policies = new ConcurrentHashMap<>();

	private final RedisGuard guard;

	private final DenyCache denyCache;

	private final LocalWindowLimiter localLimiter;

	private final Clock clock;

	/**
	 * @param algorithms one implementation per {@link Algorithm}
	 * @param guard bounds every Redis call (timeout, circuit breaker)
	 * @param denyCache answers clients Redis has denied, until their denial ends
	 * @param localLimiter decides for routes in fail-mode {@code local} while Redis is away
	 * @param clock this instance's clock, used only by the local limiter
	 */
	public WindowRateLimiter(List<WindowAlgorithm> algorithms, RedisGuard guard, DenyCache denyCache,
			LocalWindowLimiter localLimiter, Clock clock) {
		super(Config.class, CONFIGURATION_PROPERTY_NAME, null);
		algorithms.forEach(algorithm -> this.algorithms.put(algorithm.algorithm(), algorithm));
		this.guard = guard;
		this.denyCache = denyCache;
		this.localLimiter = localLimiter;
		this.clock = clock;
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		RoutePolicy route = policyOf(routeId);
		if (route == null) {
			return Mono.error(new IllegalStateException("Route '" + routeId + "' uses " + BEAN_NAME + " without "
					+ CONFIGURATION_PROPERTY_NAME + ".limit and " + CONFIGURATION_PROPERTY_NAME + ".window"));
		}
		WindowAlgorithm algorithm = this.algorithms.get(route.window().algorithm());
		String key = RedisKeys.of(routeId, id, algorithm.keySuffix());
		Decision denied = this.denyCache.denial(key);
		if (denied != null) {
			return Mono.just(response(routeId, route.window(), denied));
		}
		return this.guard.protect(algorithm.decide(key, route.window()))
			.doOnNext(decision -> this.denyCache.remember(key, decision))
			.map(decision -> response(routeId, route.window(), decision))
			.onErrorResume(error -> Mono.just(whenRedisFails(routeId, key, route)));
	}

	private Response whenRedisFails(String routeId, String key, RoutePolicy route) {
		return switch (route.failMode()) {
			case OPEN -> new Response(true, Map.of());
			case CLOSED -> response(routeId, route.window(), CLOSED_DENIAL);
			case LOCAL -> {
				WindowPolicy share = route.localShare();
				yield response(routeId, share,
						this.localLimiter.decide(key, share.limit(), share.window(), this.clock.millis()));
			}
		};
	}

	private static Response response(String routeId, WindowPolicy policy, Decision decision) {
		return new Response(decision.allowed(), RateLimitHeaders.of(routeId, policy, decision));
	}

	/** The route's own policy, else one set on the gateway's default filters. */
	private @Nullable RoutePolicy policyOf(String routeId) {
		RoutePolicy policy = this.policies.get(routeId);
		return (policy != null) ? policy : this.policies.get(RouteDefinitionRouteLocator.DEFAULT_FILTERS);
	}

	/** Called for every filter's arguments when routes are built; a bad config fails that route. */
	@Override
	public void onApplicationEvent(FilterArgsEvent event) {
		Map<String, Object> args = event.getArgs();
		if (!Config.appliesTo(args)) {
			return;
		}
		Config config = Config.from(args);
		RoutePolicy policy = config.toPolicy(event.getRouteId());
		if (!this.algorithms.containsKey(policy.window().algorithm())) {
			throw new IllegalStateException("Route '" + event.getRouteId() + "' uses " + policy.window().algorithm()
					+ ", which this limiter was built without");
		}
		getConfig().put(event.getRouteId(), config);
		if (!policy.equals(this.policies.put(event.getRouteId(), policy))) {
			// denials given under the old limit say nothing about the new one
			this.denyCache.clear();
		}
	}

	/** The policy the given route arguments make, or an {@link InvalidRouteConfigurationException}. */
	public static RoutePolicy policyFor(String routeId, Map<String, ?> args) {
		return Config.from(args).toPolicy(routeId);
	}

	/**
	 * One route's arguments as written, e.g. {@code window-rate-limiter.limit: 100}. Kept as text and
	 * checked in one place, after all are set, so every mistake gets the same kind of message.
	 */
	public static class Config {

		static final String ALGORITHM = CONFIGURATION_PROPERTY_NAME + ".algorithm";

		static final String LIMIT = CONFIGURATION_PROPERTY_NAME + ".limit";

		static final String WINDOW = CONFIGURATION_PROPERTY_NAME + ".window";

		static final String FAIL_MODE = CONFIGURATION_PROPERTY_NAME + ".fail-mode";

		static final String INSTANCES = CONFIGURATION_PROPERTY_NAME + ".instances";

		static final String LOG_STORAGE = CONFIGURATION_PROPERTY_NAME + ".log-storage";

		static final String BURST = CONFIGURATION_PROPERTY_NAME + ".burst";

		static final String KNOWN = String.join(", ", ALGORITHM, LIMIT, WINDOW, LOG_STORAGE, BURST, FAIL_MODE,
				INSTANCES);

		/** How the window is counted; sliding-window-counter when not given. */
		private String algorithm = Algorithm.SLIDING_WINDOW_COUNTER.id();

		/** Requests allowed per window, required. */
		private @Nullable String limit;

		/** The window, a duration such as 500ms, 10s, 1m, 1h or 1d, required. */
		private @Nullable String window;

		/** How sliding-log keeps its log: ring (the default, small) or sorted-set (readable with ZRANGE). */
		private @Nullable String logStorage;

		/** For token-bucket, requests allowed at once from a full bucket; the limit when not given. */
		private @Nullable String burst;

		/** What to do when Redis cannot decide: open (allow), closed (deny) or local; open when not given. */
		private String failMode = FailMode.OPEN.id();

		/** How many gateway instances share the limit, for fail-mode local; 1 when not given. */
		private String instances = "1";

		static boolean appliesTo(Map<String, ?> args) {
			return args.keySet().stream().anyMatch(key -> key.startsWith(CONFIGURATION_PROPERTY_NAME + "."));
		}

		static Config from(Map<String, ?> args) {
			Config config = new Config();
			args.forEach((key, value) -> {
				if (!key.startsWith(CONFIGURATION_PROPERTY_NAME + ".")) {
					return;
				}
				String text = (value != null) ? value.toString().trim() : "";
				switch (key) {
					case ALGORITHM -> config.setAlgorithm(text);
					case LIMIT -> config.setLimit(text);
					case WINDOW -> config.setWindow(text);
					case FAIL_MODE -> config.setFailMode(text);
					case INSTANCES -> config.setInstances(text);
					case LOG_STORAGE -> config.setLogStorage(text);
					case BURST -> config.setBurst(text);
					default -> config.unknown = (config.unknown != null) ? config.unknown : key;
				}
			});
			return config;
		}

		private @Nullable String unknown;

		RoutePolicy toPolicy(String routeId) {
			if (this.unknown != null) {
				throw new InvalidRouteConfigurationException(routeId, this.unknown, "is not a known property", KNOWN);
			}
			Algorithm parsedAlgorithm = parseAlgorithm(routeId);
			long parsedLimit = parseLimit(routeId);
			Duration parsedWindow = parseWindow(routeId);
			if (parsedLimit > WindowPolicy.MAX_LIMIT_TIMES_WINDOW_MILLIS / parsedWindow.toMillis()) {
				throw new InvalidRouteConfigurationException(routeId, LIMIT,
						"is '" + this.limit + "' with a window of '" + this.window + "'",
						"limit * window in milliseconds below 2^53 (about 9e15)");
			}
			WindowPolicy window = new WindowPolicy(parsedAlgorithm, parsedLimit, parsedWindow,
					parseBurst(routeId, parsedAlgorithm, parsedLimit));
			return new RoutePolicy(window, parseFailMode(routeId), parseInstances(routeId));
		}

		private long parseBurst(String routeId, Algorithm algorithm, long limit) {
			if (this.burst == null) {
				return limit;
			}
			if (algorithm != Algorithm.TOKEN_BUCKET) {
				throw new InvalidRouteConfigurationException(routeId, BURST, "is '" + this.burst + "'",
						"only with " + Algorithm.TOKEN_BUCKET.id() + ", not " + algorithm.id());
			}
			try {
				long value = Long.parseLong(this.burst);
				if (value >= 1 && value <= WindowPolicy.MAX_LIMIT) {
					return value;
				}
			}
			catch (NumberFormatException ex) {
				// reported below
			}
			throw new InvalidRouteConfigurationException(routeId, BURST, "is '" + this.burst + "'",
					"a whole number from 1 to " + WindowPolicy.MAX_LIMIT);
		}

		private FailMode parseFailMode(String routeId) {
			for (FailMode candidate : FailMode.values()) {
				if (candidate.id().equals(this.failMode)) {
					return candidate;
				}
			}
			throw new InvalidRouteConfigurationException(routeId, FAIL_MODE, "is '" + this.failMode + "'",
					"one of " + FailMode.ids());
		}

		private int parseInstances(String routeId) {
			try {
				int value = Integer.parseInt(this.instances);
				if (value >= 1 && value <= RoutePolicy.MAX_INSTANCES) {
					return value;
				}
			}
			catch (NumberFormatException ex) {
				// reported below
			}
			throw new InvalidRouteConfigurationException(routeId, INSTANCES, "is '" + this.instances + "'",
					"a whole number from 1 to " + RoutePolicy.MAX_INSTANCES);
		}

		private Algorithm parseAlgorithm(String routeId) {
			boolean known = false;
			for (Algorithm candidate : Algorithm.values()) {
				if (candidate.id().equals(this.algorithm)) {
					known = true;
					if (this.logStorage == null || this.logStorage.equals(candidate.storage())) {
						// the first storage listed is the default
						return candidate;
					}
				}
			}
			if (!known) {
				throw new InvalidRouteConfigurationException(routeId, ALGORITHM, "is '" + this.algorithm + "'",
						"one of " + Algorithm.ids());
			}
			boolean hasStorages = Arrays.stream(Algorithm.values())
				.anyMatch(candidate -> candidate.id().equals(this.algorithm) && candidate.storage() != null);
			throw new InvalidRouteConfigurationException(routeId, LOG_STORAGE, "is '" + this.logStorage + "'",
					hasStorages ? "one of " + Algorithm.storages()
							: "only with " + Algorithm.SLIDING_LOG.id() + ", not " + this.algorithm);
		}

		private long parseLimit(String routeId) {
			String allowed = "a whole number from 1 to " + WindowPolicy.MAX_LIMIT;
			if (this.limit == null || this.limit.isEmpty()) {
				throw new InvalidRouteConfigurationException(routeId, LIMIT, "is missing", allowed);
			}
			try {
				long value = Long.parseLong(this.limit);
				if (value >= 1 && value <= WindowPolicy.MAX_LIMIT) {
					return value;
				}
			}
			catch (NumberFormatException ex) {
				// reported below
			}
			throw new InvalidRouteConfigurationException(routeId, LIMIT, "is '" + this.limit + "'", allowed);
		}

		private Duration parseWindow(String routeId) {
			String allowed = "a duration of whole milliseconds from 1ms to 366d, such as 500ms, 10s, 1m, 1h or 1d";
			if (this.window == null || this.window.isEmpty()) {
				throw new InvalidRouteConfigurationException(routeId, WINDOW, "is missing", allowed);
			}
			try {
				Duration value = DurationStyle.detectAndParse(this.window);
				if (value.compareTo(Duration.ofMillis(1)) >= 0 && value.compareTo(WindowPolicy.MAX_WINDOW) <= 0
						&& value.toNanos() % 1_000_000 == 0) {
					return value;
				}
			}
			catch (IllegalArgumentException | DateTimeParseException | ArithmeticException ex) {
				// reported below
			}
			throw new InvalidRouteConfigurationException(routeId, WINDOW, "is '" + this.window + "'", allowed);
		}

		public String getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(String algorithm) {
			this.algorithm = algorithm;
		}

		public @Nullable String getLimit() {
			return this.limit;
		}

		public void setLimit(String limit) {
			this.limit = limit;
		}

		public @Nullable String getWindow() {
			return this.window;
		}

		public void setWindow(String window) {
			this.window = window;
		}

		public @Nullable String getLogStorage() {
			return this.logStorage;
		}

		public void setLogStorage(String logStorage) {
			this.logStorage = logStorage;
		}

		public @Nullable String getBurst() {
			return this.burst;
		}

		public void setBurst(String burst) {
			this.burst = burst;
		}

		public String getFailMode() {
			return this.failMode;
		}

		public void setFailMode(String failMode) {
			this.failMode = failMode;
		}

		public String getInstances() {
			return this.instances;
		}

		public void setInstances(String instances) {
			this.instances = instances;
		}

		@Override
		public String toString() {
			return "Config[algorithm=" + this.algorithm + ", logStorage=" + this.logStorage + ", limit=" + this.limit
					+ ", window=" + this.window + ", burst=" + this.burst + ", failMode=" + this.failMode + ", instances=" + this.instances + "]";
		}

	}

}
