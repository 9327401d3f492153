package io.windowlimiter.gateway;

import org.aopalliance.intercept.MethodInterceptor;
import reactor.core.publisher.Mono;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.web.server.ServerWebExchange;

/**
 * Puts into the Reactor context of each {@code RequestRateLimiter} filter the exchange that filter is
 * given: the request as the route's filters before it (and the default filters) left it. Plan resolvers
 * read that one, so {@code RemoveRequestHeader=X-Plan} before the limiter keeps a client from naming its
 * plan. Without it they would read what {@link ExchangeContextFilter} saw, before any route filter ran.
 *
 * <p>The gateway's {@code RateLimiter} SPI passes only (route, key), and the gateway registers its filter
 * factory unconditionally, so the factory bean is wrapped rather than replaced: every filter it makes
 * behaves as before, with one more context entry. Routes that use another limiter never read it.
 */
public class LimiterFilterExchangeCapture implements BeanPostProcessor {

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (!(bean instanceof RequestRateLimiterGatewayFilterFactory)) {
			return bean;
		}
		ProxyFactory proxy = new ProxyFactory(bean);
		proxy.setProxyTargetClass(true);
		// apply(Config), apply(Object), apply(routeId, Consumer)...: every way a filter is made
		proxy.addAdvice((MethodInterceptor) invocation -> {
			Object made = invocation.proceed();
			return (made instanceof GatewayFilter filter && "apply".equals(invocation.getMethod().getName()))
					? capturing(filter) : made;
		});
		return proxy.getProxy(bean.getClass().getClassLoader());
	}

	private static GatewayFilter capturing(GatewayFilter filter) {
		GatewayFilter capturing = new GatewayFilter() {

			@Override
			public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
				return filter.filter(exchange, chain).contextWrite(ExchangeContextFilter.with(exchange));
			}

			// the gateway's routes endpoint lists filters by their text: keep the factory's
			@Override
			public String toString() {
				return filter.toString();
			}

		};
		// the route locator orders a filter by its place in the route unless it says otherwise
		return (filter instanceof OrderedGatewayFilter ordered)
				? new OrderedGatewayFilter(capturing, ordered.getOrder()) : capturing;
	}

}
