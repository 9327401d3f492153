package io.windowlimiter.gateway;

import io.windowlimiter.gateway.algorithm.WindowPolicy;

/**
 * One limit of a route, with the name clients see for it in {@code RateLimit-Policy}.
 *
 * @param name the policy's name, unique within its route
 * @param policy the limit and how it is counted
 */
public record RouteLimit(String name, WindowPolicy policy) {
}
