package io.windowlimiter.gateway;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * What a request costs, for the {@code WindowRateLimit} filter's {@code cost-resolver: "#{@beanName}"}:
 * read anything of the exchange (a header, the body's size, a GraphQL query's complexity) and return the
 * units of every limit the request uses. Empty: the filter's {@code cost-from-header}, else its
 * {@code cost}. A cost above what the route's smallest limit allows at once is answered 400 (the request
 * could never pass); a cost below 1 is a mistake of the resolver and fails the request.
 */
@FunctionalInterface
public interface CostResolver {

	/** The request's cost, a whole number from 1; empty for the filter's own. */
	Mono<Long> resolve(ServerWebExchange exchange);

}
