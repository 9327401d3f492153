package io.windowlimiter.app.mvc;

import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The backend of the {@code demo} route, served by this application itself so the demo needs no
 * other server: the route forwards {@code /demo/**} to {@code /demo-backend}.
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
		// the gateway's route sets its id on the request, and a forward keeps the request's attributes
		return request.attribute(MvcUtils.GATEWAY_ROUTE_ID_ATTR).isPresent();
	}

	private static ServerResponse hello(ServerRequest request) {
		return ServerResponse.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.body(new Greeting("hello from the demo backend", request.path()));
	}

	/** The demo backend's answer; {@code path} is the path it received. */
	record Greeting(String message, String path) {
	}

}
