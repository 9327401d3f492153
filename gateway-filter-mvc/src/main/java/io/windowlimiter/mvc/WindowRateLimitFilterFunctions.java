package io.windowlimiter.mvc;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.windowlimiter.core.policy.RouteArgs;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.cloud.gateway.server.mvc.common.Configurable;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.cloud.gateway.server.mvc.filter.SimpleFilterSupplier;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The {@code WindowRateLimit} filter of Server MVC routes. In YAML, under
 * {@code spring.cloud.gateway.server.webmvc.routes[].filters}:
 * <pre>
 * - name: WindowRateLimit
 *   args:
 *     key-resolver: clientIpKeyResolver
 *     limit: 5
 *     window: 10s
 * </pre>
 * In the Java DSL: {@code .filter(windowRateLimit(c -> c.setKeyResolver("clientIpKeyResolver")
 * .setLimit("5").setWindow("10s")))} on a route built with {@code GatewayRouterFunctions.route("id")}.
 *
 * <p>Server MVC finds filters as public static methods of classes a {@code FilterSupplier} bean names,
 * by the method's name; {@code rateLimit} is Bucket4j's, so this one is {@code windowRateLimit}.
 */
public abstract class WindowRateLimitFilterFunctions {

	private static final Log logger = LogFactory.getLog(WindowRateLimitFilterFunctions.class);

	private WindowRateLimitFilterFunctions() {
	}

	/** Set by the first run-time refresh of the routes ({@link MvcRoutesRefresh}); start-up is over by then. */
	private static volatile boolean routesRefreshed;

	/**
	 * The filter, from YAML arguments bound into the config (Server MVC's {@code @Configurable}). At start-up
	 * {@link MvcRouteCheck} has refused bad ones already. After a refresh a bad one answers 500 on its own
	 * route: Server MVC builds every route in one holder, so throwing here would fail them all.
	 */
	@Configurable
	public static HandlerFilterFunction<ServerResponse, ServerResponse> windowRateLimit(WindowRateLimitConfig config) {
		try {
			return checked(config);
		}
		catch (IllegalArgumentException ex) {
			if (!routesRefreshed) {
				throw ex;
			}
			logger.error("A route refreshed with a bad WindowRateLimit answers 500 until fixed: " + ex.getMessage());
			return (request, next) -> ServerResponse.status(HttpStatus.INTERNAL_SERVER_ERROR)
				.contentType(MediaType.TEXT_PLAIN)
				.body("The rate limit of this route is misconfigured; the gateway's log names the property.\n");
		}
	}

	static void routesRefreshed() {
		routesRefreshed = true;
	}

	/** The filter, set up in the Java DSL: a bad argument fails where the route is built. */
	public static HandlerFilterFunction<ServerResponse, ServerResponse> windowRateLimit(
			Consumer<WindowRateLimitConfig> configurer) {
		WindowRateLimitConfig config = new WindowRateLimitConfig();
		configurer.accept(config);
		return checked(config);
	}

	private static HandlerFilterFunction<ServerResponse, ServerResponse> checked(WindowRateLimitConfig config) {
		if (config.getKeyResolver() == null) {
			throw new IllegalArgumentException("WindowRateLimit needs key-resolver: the name of a MvcKeyResolver bean "
					+ "(built in: headerKeyResolver, clientIpKeyResolver, principalKeyResolver)");
		}
		config.checkResponseArguments(WindowRateLimitConfig.DSL_ROUTE);
		config.checkLlmArguments(WindowRateLimitConfig.DSL_ROUTE);
		// checked now, so a Java DSL route fails where it is built; YAML routes were checked by MvcRouteCheck
		RouteArgs.parse(WindowRateLimitConfig.DSL_ROUTE, config.limiterArguments());
		AtomicReference<MvcRateLimiter> limiter = new AtomicReference<>();
		return (request, next) -> {
			MvcRateLimiter found = limiter.get();
			if (found == null) {
				// the bean is reached through the request: Server MVC makes filters before any bean is handed in
				found = MvcUtils.getApplicationContext(request).getBean(MvcRateLimiter.class);
				limiter.set(found);
			}
			return found.filter(request, next, config);
		};
	}

	/** Makes {@code WindowRateLimit} known to Server MVC's route properties. */
	public static class FilterSupplier extends SimpleFilterSupplier {

		public FilterSupplier() {
			super(WindowRateLimitFilterFunctions.class);
		}

	}

}
