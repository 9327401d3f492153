package io.windowlimiter.mvc;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.windowlimiter.core.policy.RouteArgs;

import org.springframework.cloud.gateway.server.mvc.common.Configurable;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.cloud.gateway.server.mvc.filter.SimpleFilterSupplier;
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

	private WindowRateLimitFilterFunctions() {
	}

	/** The filter, from YAML arguments bound into the config (Server MVC's {@code @Configurable}). */
	@Configurable
	public static HandlerFilterFunction<ServerResponse, ServerResponse> windowRateLimit(WindowRateLimitConfig config) {
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

	/** The filter, set up in the Java DSL. */
	public static HandlerFilterFunction<ServerResponse, ServerResponse> windowRateLimit(
			Consumer<WindowRateLimitConfig> configurer) {
		WindowRateLimitConfig config = new WindowRateLimitConfig();
		configurer.accept(config);
		return windowRateLimit(config);
	}

	/** Makes {@code WindowRateLimit} known to Server MVC's route properties. */
	public static class FilterSupplier extends SimpleFilterSupplier {

		public FilterSupplier() {
			super(WindowRateLimitFilterFunctions.class);
		}

	}

}
