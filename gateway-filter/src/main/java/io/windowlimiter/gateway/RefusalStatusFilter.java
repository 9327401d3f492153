package io.windowlimiter.gateway;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.policy.CompiledRoute;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * Gives a request the {@code RequestRateLimiter} filter refused the status the core chose for it (a
 * calendar quota's {@code quota-status}, e.g. 403), where the filter answers every refusal with its one
 * {@code status-code}: the limiter marks the response with {@link #STATUS}, and this filter, wrapping the
 * response of routes that set a {@code quota-status} (others pass untouched), sets that status when the
 * response completes and drops the mark, which never leaves. It runs inside the {@link ProblemDetailsFilter},
 * whose body then names the status given.
 */
public class RefusalStatusFilter implements GlobalFilter, Ordered {

	/** The limiter's mark on a refusal that takes another status than the filter's. */
	public static final String STATUS = "X-Window-Rate-Limiter-Status";

	private final RateLimiterCore core;

	public RefusalStatusFilter(RateLimiterCore core) {
		this.core = core;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
		CompiledRoute limits = (route != null) ? this.core.route(route.getId()) : null;
		if (limits == null || limits.policy.quotaStatus() == 0) {
			return chain.filter(exchange);
		}
		return chain.filter(exchange.mutate().response(new StatusResponse(exchange.getResponse())).build());
	}

	/** Inside the problem-details filter (the outermost), so that its body names the status set here. */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE + 1;
	}

	private static final class StatusResponse extends ServerHttpResponseDecorator {

		StatusResponse(ServerHttpResponse delegate) {
			super(delegate);
		}

		@Override
		public Mono<Void> setComplete() {
			String status = getHeaders().getFirst(STATUS);
			if (status != null) {
				getHeaders().remove(STATUS);
				setStatusCode(HttpStatusCode.valueOf(Integer.parseInt(status)));
			}
			return super.setComplete();
		}

		@Override
		public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
			getHeaders().remove(STATUS);
			return super.writeWith(body);
		}

		@Override
		public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
			getHeaders().remove(STATUS);
			return super.writeAndFlushWith(body);
		}

	}

}
