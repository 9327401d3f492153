package io.windowlimiter.gateway;

import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import io.windowlimiter.core.Admission;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.RouteArgs;
import io.windowlimiter.core.policy.RoutePolicy;
import io.windowlimiter.gateway.plan.PlanResolver;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * The gateway's {@code RateLimiter}: adapts the {@code RequestRateLimiter} filter to the
 * {@link RateLimiterCore}. Per route it hands the core the {@code window-rate-limiter.*} arguments of the
 * filter (when the gateway builds a route from properties, or from {@link #register} for a route built in
 * Java); per request it asks the core with the route id and client key the SPI gives, the plan the request
 * names read through the {@link ExchangeContextFilter}, and turns the core's admission into the SPI's
 * response (marked for a problem-details body when that is on).
 */
public class WindowRateLimiter extends AbstractRateLimiter<WindowRateLimiter.Config> {

	/** The bean name, as used in route config: {@code rate-limiter: "#{@windowRateLimiter}"}. */
	public static final String BEAN_NAME = "windowRateLimiter";

	/** The prefix of this limiter's arguments of the {@code RequestRateLimiter} filter. */
	public static final String CONFIGURATION_PROPERTY_NAME = "window-rate-limiter";

	private final RateLimiterCore core;

	private final @Nullable PlanResolver planResolver;

	private final boolean problemDetails;

	/** Routes given their limits by {@link #register}, each at most once. */
	private final Set<String> registered = ConcurrentHashMap.newKeySet();

	/**
	 * @param core decides
	 * @param planResolver reads a client's plan from its request; null for none
	 * @param problemDetails whether to mark refused requests for a problem-details body
	 */
	public WindowRateLimiter(RateLimiterCore core, @Nullable PlanResolver planResolver, boolean problemDetails) {
		super(Config.class, CONFIGURATION_PROPERTY_NAME, null);
		this.core = core;
		this.planResolver = planResolver;
		this.problemDetails = problemDetails;
	}

	/** A limiter with default headers, no metrics, no problem details and no plans. */
	public static WindowRateLimiter of(LimitScript script, RedisGuard guard, DenyCache denyCache,
			LocalWindowLimiter localLimiter, Clock clock) {
		return new WindowRateLimiter(RateLimiterCore.of(script, guard, denyCache, localLimiter,
				new RateLimitHeaders(RateLimitHeaders.Names.defaults()), RateLimitMetrics.NONE, clock), null, false);
	}

	/** The core this limiter adapts, for the other adapters and operators. */
	public RateLimiterCore core() {
		return this.core;
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		if (this.core.route(routeId) == null) {
			return Mono.error(new IllegalStateException("Route '" + routeId + "' uses " + BEAN_NAME + " without "
					+ CONFIGURATION_PROPERTY_NAME + ".limit and " + CONFIGURATION_PROPERTY_NAME + ".window"));
		}
		// the plan comes from the request, which only the Reactor context carries this far; read only if needed
		Mono<String> requestedPlan = (this.planResolver == null) ? Mono.empty()
				: Mono.deferContextual(context -> {
					ServerWebExchange exchange = ExchangeContextFilter.exchange(context);
					return (exchange != null) ? this.planResolver.resolve(exchange) : Mono.empty();
				});
		return Mono.deferContextual(context -> this.core.admit(routeId, id, requestedPlan)
			.map(admission -> response(admission, ExchangeContextFilter.exchange(context))));
	}

	private Response response(Admission admission, @Nullable ServerWebExchange exchange) {
		if (admission.forbidden()) {
			return forbidden(admission, exchange);
		}
		boolean marked = this.problemDetails && !admission.violated().isEmpty();
		if (admission.passes() || (!marked && admission.status() == 0)) {
			return new Response(admission.passes(), admission.headers());
		}
		Map<String, String> headers = new HashMap<>(admission.headers());
		if (marked) {
			headers.put(ProblemDetailsFilter.VIOLATED, ProblemDetailsFilter.mark(admission.violated()));
		}
		if (admission.status() != 0) {
			// the filter answers with its own status-code; RefusalStatusFilter puts this one in its place
			headers.put(RefusalStatusFilter.STATUS, Integer.toString(admission.status()));
		}
		return new Response(false, headers);
	}

	/**
	 * A client on a deny list or blocked: 403. The {@code RequestRateLimiter} filter sets its own refusal
	 * status (429) on every refusal; the status is changed to 403 just before the response is committed, so
	 * after the filter set it. Without the exchange (the SPI called from elsewhere) the filter's status stays.
	 */
	private Response forbidden(Admission admission, @Nullable ServerWebExchange exchange) {
		if (exchange != null) {
			ServerHttpResponse response = exchange.getResponse();
			response.beforeCommit(() -> {
				response.setStatusCode(HttpStatus.FORBIDDEN);
				return Mono.empty();
			});
		}
		if (!this.problemDetails) {
			return new Response(false, admission.headers());
		}
		Map<String, String> headers = new HashMap<>(admission.headers());
		headers.put(ProblemDetailsFilter.FORBIDDEN, "?1");
		return new Response(false, headers);
	}

	/** Called for every filter's arguments when routes are built; a bad config fails that route. */
	@Override
	public void onApplicationEvent(FilterArgsEvent event) {
		Map<String, Object> args = event.getArgs();
		if (!RouteArgs.appliesTo(args)) {
			return;
		}
		// the filter's key-resolver, as the bean its #{...} names: one of credentials has the core hash the keys
		Object keyResolver = args.containsKey("key-resolver") ? args.get("key-resolver") : args.get("keyResolver");
		configure(event.getRouteId(), CredentialKeys.marked(args, keyResolver));
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

	private void configure(String routeId, Map<String, Object> args) {
		this.core.configure(routeId, args);
		getConfig().put(routeId, new Config(args));
	}

	/**
	 * Forgets the limits of every route not among the gateway's routes now (see
	 * {@link RateLimiterCore#retainRoutes}).
	 */
	public void retainRoutes(Set<String> routeIds) {
		this.registered.removeAll(this.core.retainRoutes(routeIds));
	}

	/** The policy the given route arguments make, or an {@link InvalidRouteConfigurationException}. */
	public static RoutePolicy policyFor(String routeId, Map<String, ?> args) {
		return RouteArgs.parse(routeId, args);
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
