package io.windowlimiter.gateway;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.windowlimiter.gateway.algorithm.Algorithm;
import io.windowlimiter.gateway.algorithm.WindowAlgorithm;
import io.windowlimiter.gateway.algorithm.WindowPolicy;
import io.windowlimiter.gateway.key.RedisKeys;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;

/**
 * The gateway's {@code RateLimiter}: per route it turns the {@code window-rate-limiter.*} arguments of
 * the {@code RequestRateLimiter} filter into a {@link WindowPolicy}, and per request it builds the
 * client's key, asks the route's algorithm and turns the decision into headers. Nothing else.
 */
public class WindowRateLimiter extends AbstractRateLimiter<WindowRateLimiter.Config> {

	/** The bean name, as used in route config: {@code rate-limiter: "#{@windowRateLimiter}"}. */
	public static final String BEAN_NAME = "windowRateLimiter";

	/** The prefix of this limiter's arguments of the {@code RequestRateLimiter} filter. */
	public static final String CONFIGURATION_PROPERTY_NAME = "window-rate-limiter";

	private static final Log logger = LogFactory.getLog(WindowRateLimiter.class);

	private final Map<Algorithm, WindowAlgorithm> algorithms = new EnumMap<>(Algorithm.class);

	private final Map<String, WindowPolicy> policies = new ConcurrentHashMap<>();

	public WindowRateLimiter(List<WindowAlgorithm> algorithms) {
		super(Config.class, CONFIGURATION_PROPERTY_NAME, null);
		algorithms.forEach(algorithm -> this.algorithms.put(algorithm.algorithm(), algorithm));
		for (Algorithm algorithm : Algorithm.values()) {
			if (!this.algorithms.containsKey(algorithm)) {
				throw new IllegalArgumentException("No implementation given for " + algorithm);
			}
		}
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		WindowPolicy policy = policyOf(routeId);
		if (policy == null) {
			return Mono.error(new IllegalStateException("Route '" + routeId + "' uses " + BEAN_NAME + " without "
					+ CONFIGURATION_PROPERTY_NAME + ".limit and " + CONFIGURATION_PROPERTY_NAME + ".window"));
		}
		WindowAlgorithm algorithm = this.algorithms.get(policy.algorithm());
		String key = RedisKeys.of(routeId, id, algorithm.keySuffix());
		return algorithm.decide(key, policy)
			.map(decision -> new Response(decision.allowed(), RateLimitHeaders.of(routeId, policy, decision)))
			.onErrorResume(error -> {
				// Fail open, like the gateway's own limiter: a Redis outage must not take the API down with it.
				logger.warn("Rate limit on route '" + routeId + "' not decided, request allowed: " + error);
				return Mono.just(new Response(true, Map.of()));
			});
	}

	/** The route's own policy, else one set on the gateway's default filters. */
	private @Nullable WindowPolicy policyOf(String routeId) {
		WindowPolicy policy = this.policies.get(routeId);
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
		WindowPolicy policy = config.toPolicy(event.getRouteId());
		getConfig().put(event.getRouteId(), config);
		this.policies.put(event.getRouteId(), policy);
	}

	/** The policy the given route arguments make, or an {@link InvalidRouteConfigurationException}. */
	public static WindowPolicy policyFor(String routeId, Map<String, ?> args) {
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

		/** How the window is counted; sliding-window-counter when not given. */
		private String algorithm = Algorithm.SLIDING_WINDOW_COUNTER.id();

		/** Requests allowed per window, required. */
		private @Nullable String limit;

		/** The window, a duration such as 500ms, 10s, 1m, 1h or 1d, required. */
		private @Nullable String window;

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
					default -> config.unknown = (config.unknown != null) ? config.unknown : key;
				}
			});
			return config;
		}

		private @Nullable String unknown;

		WindowPolicy toPolicy(String routeId) {
			if (this.unknown != null) {
				throw new InvalidRouteConfigurationException(routeId, this.unknown, "is not a known property",
						ALGORITHM + ", " + LIMIT + ", " + WINDOW);
			}
			Algorithm parsedAlgorithm = parseAlgorithm(routeId);
			long parsedLimit = parseLimit(routeId);
			Duration parsedWindow = parseWindow(routeId);
			if (parsedLimit > WindowPolicy.MAX_LIMIT_TIMES_WINDOW_MILLIS / parsedWindow.toMillis()) {
				throw new InvalidRouteConfigurationException(routeId, LIMIT,
						"is '" + this.limit + "' with a window of '" + this.window + "'",
						"limit * window in milliseconds below 2^53 (about 9e15)");
			}
			return new WindowPolicy(parsedAlgorithm, parsedLimit, parsedWindow);
		}

		private Algorithm parseAlgorithm(String routeId) {
			for (Algorithm candidate : Algorithm.values()) {
				if (candidate.id().equals(this.algorithm)) {
					return candidate;
				}
			}
			throw new InvalidRouteConfigurationException(routeId, ALGORITHM, "is '" + this.algorithm + "'",
					"one of " + Algorithm.ids());
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

		@Override
		public String toString() {
			return "Config[algorithm=" + this.algorithm + ", limit=" + this.limit + ", window=" + this.window + "]";
		}

	}

}
