package io.windowlimiter.core.plan;

/**
 * What every adapter's plan resolver is (the WebFlux {@code PlanResolver}, the Server MVC
 * {@code MvcPlanResolver}): where a bean of this type exists, routes that use plans ask requests for
 * their plan; where none does, they use the route's default plan. The core reads no request itself.
 */
public interface RequestPlans {

}
