package io.windowlimiter.mvc;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import static io.windowlimiter.mvc.WindowRateLimitFilterFunctions.windowRateLimit;
import static org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions.uri;
import static org.springframework.web.servlet.function.RequestPredicates.path;

/** A Server MVC gateway for the tests: routes from properties, and one route built in the Java DSL. */
@SpringBootApplication
public class MvcTestApplication {

	/** {@code /dsl/**}: 2 per minute per X-API-Key, set up in Java. */
	@Bean
	public RouterFunction<ServerResponse> dslRoute(Environment environment) {
		return GatewayRouterFunctions.route("dsl")
			.route(path("/dsl/**"), HandlerFunctions.http())
			.before(uri(environment.getRequiredProperty("test.downstream")))
			.filter(windowRateLimit(c -> c.setKeyResolver("headerKeyResolver").setLimit("2").setWindow("1m")))
			.build();
	}

	/** {@code /dsl-quota/**}: 1 a day in Kiritimati (403 past it), one key denied and one allowed, in Java. */
	@Bean
	public RouterFunction<ServerResponse> dslQuotaRoute(Environment environment) {
		return GatewayRouterFunctions.route("dsl-quota")
			.route(path("/dsl-quota/**"), HandlerFunctions.http())
			.before(uri(environment.getRequiredProperty("test.downstream")))
			.filter(windowRateLimit(c -> c.setKeyResolver("headerKeyResolver")
				.setLimit("1")
				.setCalendar("day")
				.setTimeZone("Pacific/Kiritimati")
				.setQuotaStatus("403")
				.setDeny("dsl-banned")
				.setAllow("dsl-vip")))
			.build();
	}

}
