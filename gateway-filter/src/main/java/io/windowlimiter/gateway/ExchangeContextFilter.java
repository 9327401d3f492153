package io.windowlimiter.gateway;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Hands the request to the limiter, whose {@code RateLimiter} SPI hears only (route id, client key): it
 * puts the exchange into the Reactor context of the rest of the filter chain, where
 * {@link WindowRateLimiter#isAllowed} reads it to resolve the client's plan. The exchange is the one
 * this filter sees, at {@link #ORDER}: a filter that sets what a plan resolver reads (a header, say)
 * must run before it, as a {@code WebFilter} (Spring Security is one) or a {@code GlobalFilter} ordered
 * below {@link #ORDER}. Route filters run after it.
 */
public class ExchangeContextFilter implements GlobalFilter, Ordered {

	/** Before every route filter (the gateway numbers them from 1), after global filters ordered below 0. */
	public static final int ORDER = 0;

	private static final String KEY = ExchangeContextFilter.class.getName();

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		return chain.filter(exchange).contextWrite(Context.of(KEY, exchange));
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	/** The exchange this filter put in the context; null when the filter did not run. */
	static @Nullable ServerWebExchange exchange(ContextView context) {
		return context.getOrDefault(KEY, null);
	}

}
