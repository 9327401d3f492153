package io.windowlimiter.gateway;

import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.cloud.gateway.event.RefreshRoutesResultEvent;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ApplicationListener;

/**
 * After each successful refresh of the gateway's routes, has the limiter forget the routes the gateway no
 * longer has ({@link WindowRateLimiter#retainRoutes}). The event's source is the gateway's caching route
 * locator, whose routes are then at hand without building anything.
 */
public class DeletedRoutesListener implements ApplicationListener<RefreshRoutesResultEvent> {

	private static final Log logger = LogFactory.getLog(DeletedRoutesListener.class);

	private final WindowRateLimiter limiter;

	public DeletedRoutesListener(WindowRateLimiter limiter) {
		this.limiter = limiter;
	}

	@Override
	public void onApplicationEvent(RefreshRoutesResultEvent event) {
		// a failed refresh keeps the routes the gateway had, and so their limits
		if (event.isSuccess() && event.getSource() instanceof RouteLocator routes) {
			routes.getRoutes()
				.map(Route::getId)
				.collect(Collectors.toSet())
				.subscribe(this.limiter::retainRoutes,
						error -> logger.warn("Could not list the gateway's routes to forget deleted ones: " + error));
		}
	}

}
