package io.windowlimiter.gateway.plan;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * The plan is a request header's value ({@code window-rate-limiter.plan-header}). Only as trustworthy as
 * whoever writes the header: it is meant to be set by a filter of yours that runs before the limiter
 * (authentication, say) and overwrites what the client sent; a header a client may send itself lets
 * every client pick the biggest plan.
 */
public class HeaderPlanResolver implements PlanResolver {

	private final String header;

	public HeaderPlanResolver(String header) {
		this.header = header;
	}

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		return Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst(this.header));
	}

}
