package io.windowlimiter.gateway.plan;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.plan.RequestPlans;

/**
 * Reads a client's plan from its request, for routes that use plans ({@code window-rate-limiter.plan}).
 * Asked only when no assignment or override made at run time applies (see {@link PlanAssignments}); an
 * empty answer, or a plan nobody declared, leaves the client on the route's default plan.
 *
 * <p>Define one as a bean and the limiter uses it instead of the {@code plan-header} one. The request
 * is what the client sent, so read only what a filter you trust has written or verified: a claim or
 * authority of the authenticated principal ({@code exchange.getPrincipal()}), or a header that an
 * authentication filter in front of the limiter sets after removing whatever the client sent.
 */
@FunctionalInterface
public interface PlanResolver extends RequestPlans {

	/** The client's plan, or empty for the route's default. */
	Mono<String> resolve(ServerWebExchange exchange);

	/** This resolver's plan, or when it has none, {@code next}'s. */
	default PlanResolver orElse(PlanResolver next) {
		return exchange -> resolve(exchange).switchIfEmpty(Mono.defer(() -> next.resolve(exchange)));
	}

}
