package io.windowlimiter.app;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The backend of the {@code demo} route, served by this application itself so the demo needs no
 * other server: the route forwards {@code /demo/**} to {@code /demo-backend/**}.
 *
 * <p>It answers only requests the gateway forwarded. Called directly, {@code /demo-backend} would be
 * a way around the rate limit, so it is a 404 then.
 */
@Configuration(proxyBeanMethods = false)
public class DemoBackend {

	static final String PATH = "/demo-backend";

	@Bean
	public RouterFunction<ServerResponse> demoBackendRoutes() {
		return RouterFunctions.route(RequestPredicates.path(PATH + "/**").and(DemoBackend::forwardedByGateway),
				DemoBackend::hello);
	}

	private static boolean forwardedByGateway(ServerRequest request) {
		// The gateway's handler mapping sets the matched route; a direct request has none.
		return request.attribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR).isPresent();
	}

	private static Mono<ServerResponse> hello(ServerRequest request) {
		return ServerResponse.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(new Greeting("hello from the demo backend", request.path()));
	}

	/** The demo backend's answer; {@code path} is the path it received. */
	record Greeting(String message, String path) {
	}

}
