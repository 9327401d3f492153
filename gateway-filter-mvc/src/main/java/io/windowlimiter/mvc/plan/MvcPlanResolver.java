package io.windowlimiter.mvc.plan;

import io.windowlimiter.core.plan.RequestPlans;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/**
 * Reads a client's plan from its request, on Server MVC routes that use plans ({@code plan}). Asked only
 * when no assignment or override made at run time applies; {@code null}, or a plan nobody declared,
 * leaves the client on the route's default plan. Define one as a bean to replace the {@code plan-header}
 * one; read only what a filter you trust has written or verified.
 */
@FunctionalInterface
public interface MvcPlanResolver extends RequestPlans {

	/** The client's plan, or {@code null} for the route's default. */
	@Nullable String resolve(ServerRequest request);

}
