package io.windowlimiter.app.mvc;

import java.time.Duration;

import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.gateway.server.mvc.filter.Bucket4jFilterFunctions;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import static org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions.uri;
import static org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions.route;
import static org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions.http;
import static org.springframework.web.servlet.function.RequestPredicates.path;

/**
 * For the benchmarks only, off unless {@code gateway-app-mvc.bucket4j-route.uri} is set: the gateway's own
 * Bucket4j filter ({@code rateLimit}, a token bucket set up in the Java DSL, as its documentation requires) on
 * {@code /bucket4j/**}, keyed by X-API-Key, over the same Redis with Bucket4j's Lettuce proxy manager. It
 * is what a Server MVC user has without this library, measured beside {@code WindowRateLimit}. Its client
 * shares the application's Lettuce resources, as {@code WindowRateLimit}'s decisions (sent over Spring Data
 * Redis's connection) do: each command pays what the application configured there (Spring Boot's command
 * observation), on both sides alike.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "gateway-app-mvc.bucket4j-route.uri")
public class Bucket4jComparisonRoute {

	@Bean(destroyMethod = "shutdown")
	RedisClient bucket4jRedisClient(Environment environment, ClientResources resources) {
		return RedisClient.create(resources, RedisURI.create(environment.getProperty("spring.data.redis.host", "127.0.0.1"),
				environment.getProperty("spring.data.redis.port", Integer.class, 6379)));
	}

	@Bean(destroyMethod = "close")
	StatefulRedisConnection<String, byte[]> bucket4jRedisConnection(RedisClient bucket4jRedisClient) {
		return bucket4jRedisClient.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
	}

	/** What Bucket4jFilterFunctions looks up by type at every request. */
	@Bean
	AsyncProxyManager<String> bucket4jProxyManager(StatefulRedisConnection<String, byte[]> bucket4jRedisConnection) {
		return Bucket4jLettuce.casBasedBuilder(bucket4jRedisConnection).build().asAsync();
	}

	@Bean
	RouterFunction<ServerResponse> bucket4jRoute(Environment environment) {
		long capacity = environment.getProperty("gateway-app-mvc.bucket4j-route.capacity", Long.class, 1_000_000L);
		return route("bucket4j").route(path("/bucket4j/**"), http())
			.before(uri(environment.getRequiredProperty("gateway-app-mvc.bucket4j-route.uri")))
			.filter(Bucket4jFilterFunctions.rateLimit(config -> config.setCapacity(capacity)
				.setPeriod(Duration.ofMinutes(1))
				.setKeyResolver(request -> request.headers().firstHeader("X-API-Key"))))
			.build();
	}

}
