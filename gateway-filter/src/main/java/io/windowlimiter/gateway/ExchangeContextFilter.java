package io.windowlimiter.gateway;

import java.util.function.Function;

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
 * this filter sees, at {@link #ORDER}, unless the {@code RequestRateLimiter} filter deciding puts its own
 * (see {@link LimiterFilterExchangeCapture}: the request as the route's filters before it left it).
 */
public class ExchangeContextFilter implements GlobalFilter, Ordered {

	/** Before every route filter (the gateway numbers them from 1), after global filters ordered below 0. */
	public static final int ORDER = 0;

	private static final String KEY = ExchangeContextFilter.class.getName();

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		return chain.filter(exchange).contextWrite(with(exchange));
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	/** The context entry that hands {@code exchange} to the limiter. */
	static Function<Context, Context> with(ServerWebExchange exchange) {
		return context -> context.put(KEY, exchange);
	}

	/**
	 * The exchange put in the context: by the {@code RequestRateLimiter} filter deciding (see
	 * {@link LimiterFilterExchangeCapture}), else by this filter; null when neither ran.
	 */
	static @Nullable ServerWebExchange exchange(ContextView context) {
		return context.getOrDefault(KEY, null);
	}

}
