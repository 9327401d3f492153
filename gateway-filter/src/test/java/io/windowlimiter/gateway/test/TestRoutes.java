package io.windowlimiter.gateway.test;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Properties for gateway tests: the shared test Redis, and routes {@code /<id>/**} to a real
 * downstream through the {@code RequestRateLimiter} filter.
 */
public final class TestRoutes {

	private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

	private TestRoutes() {
	}

	/** Points the gateway at the shared test Redis. */
	public static void redis(DynamicPropertyRegistry registry) {
		RedisTestServer redis = RedisTestServer.get();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	/**
	 * Route number {@code index}: {@code /<id>/**} to {@code downstream}, limited by the window rate
	 * limiter per X-API-Key unless {@code args} name another limiter or key resolver.
	 * @param args the filter's arguments as {@code name=value}
	 */
	public static void route(DynamicPropertyRegistry registry, int index, String id, Downstream downstream,
			String... args) {
		String route = ROUTES + "[" + index + "]";
		registry.add(route + ".id", () -> id);
		registry.add(route + ".uri", downstream::uri);
		registry.add(route + ".predicates[0]", () -> "Path=/" + id + "/**");
		registry.add(route + ".filters[0].name", () -> "RequestRateLimiter");
		registry.add(route + ".filters[0].args.rate-limiter", () -> "#{@windowRateLimiter}");
		registry.add(route + ".filters[0].args.key-resolver", () -> "#{@headerKeyResolver}");
		for (String arg : args) {
			String[] pair = arg.split("=", 2);
			registry.add(route + ".filters[0].args." + pair[0], () -> pair[1]);
		}
	}

}
