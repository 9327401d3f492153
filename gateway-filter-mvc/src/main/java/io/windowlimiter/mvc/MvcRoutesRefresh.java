package io.windowlimiter.mvc;

import java.util.HashSet;
import java.util.Set;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.cloud.context.scope.refresh.RefreshScopeRefreshedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;

/**
 * Server MVC rebuilds its routes from properties when Spring Cloud refreshes them ({@code /actuator/refresh},
 * a config server, a bus): its route holder is refresh-scoped. This gives the core the routes' limits as they
 * are now, checked as at start-up ({@link MvcRouteCheck}), and has it forget the routes that are gone, so a
 * route's changed limits apply from the refresh on and the endpoint lists what the gateway has. Routes of the
 * Java DSL are kept: they cannot change at run time.
 */
public class MvcRoutesRefresh implements ApplicationListener<RefreshScopeRefreshedEvent> {

	private static final Log logger = LogFactory.getLog(MvcRoutesRefresh.class);

	private final Environment environment;

	private final RateLimiterCore core;

	private final ListableBeanFactory beans;

	private final MvcRateLimiter limiter;

	public MvcRoutesRefresh(Environment environment, RateLimiterCore core, ListableBeanFactory beans,
			MvcRateLimiter limiter) {
		this.environment = environment;
		this.core = core;
		this.beans = beans;
		this.limiter = limiter;
	}

	@Override
	public void onApplicationEvent(RefreshScopeRefreshedEvent event) {
		WindowRateLimitFilterFunctions.routesRefreshed();
		MvcRouteCheck check;
		try {
			check = new MvcRouteCheck(this.environment, this.core, this.beans);
		}
		catch (InvalidRouteConfigurationException ex) {
			// the route answers 500 until fixed (see the filter); the routes checked before it have their new limits
			logger.error("Routes refreshed with a bad WindowRateLimit, no route forgotten: " + ex.getMessage());
			return;
		}
		Set<String> kept = new HashSet<>(check.routes());
		kept.addAll(this.limiter.javaDslRoutes());
		this.core.retainRoutes(kept);
	}

}
