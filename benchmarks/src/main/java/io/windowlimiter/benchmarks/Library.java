package io.windowlimiter.benchmarks;

import java.util.Map;

import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import io.windowlimiter.gateway.autoconfigure.WindowRateLimiterAutoConfiguration;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * The library wired as a gateway wires it, without HTTP: one Lettuce connection factory, the
 * library's own auto-configuration for the beans (so new algorithms and new constructor arguments
 * are picked up without changing the benchmarks), routes configured through the same
 * {@link FilterArgsEvent} the gateway publishes.
 */
final class Library implements AutoCloseable {

	private final LettuceConnectionFactory connectionFactory;

	private final AnnotationConfigApplicationContext context;

	private final @Nullable ScriptRecorder recorder;

	/** The library as a gateway has it. */
	Library(String host, int port) {
		this(host, port, false);
	}

	/** With {@code recording}, noting what each script is sent (see {@link #lastCall}). */
	Library(String host, int port, boolean recording) {
		this(host, port, recording, Map.of());
	}

	/** With global properties of the limiter, e.g. {@code window-rate-limiter.plans.*}. */
	Library(String host, int port, boolean recording, Map<String, Object> properties) {
		this.connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.recorder = recording ? new ScriptRecorder() : null;
		if (this.recorder != null) {
			this.connectionFactory.getRequiredNativeClient().addListener(this.recorder);
		}
		ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(this.connectionFactory);
		this.context = new AnnotationConfigApplicationContext();
		Map<String, Object> settings = new java.util.HashMap<>(properties);
		if (!Settings.redisTimeout().isEmpty()) {
			settings.put("window-rate-limiter.redis-timeout", Settings.redisTimeout());
		}
		this.context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("benchmarks", settings));
		this.context.registerBean(ReactiveStringRedisTemplate.class, () -> template);
		this.context.register(WindowRateLimiterCoreAutoConfiguration.class, WindowRateLimiterAutoConfiguration.class);
		this.context.refresh();
	}

	WindowRateLimiter limiter() {
		return this.context.getBean(WindowRateLimiter.class);
	}

	/** Configures a route as the gateway does when it builds a {@code RequestRateLimiter} filter. */
	void configureRoute(String routeId, Algorithm algorithm, long limit, String window) {
		Map<String, Object> args = Algorithms.routeArgs(algorithm, limit, window);
		this.context.publishEvent(new FilterArgsEvent(this, routeId, args));
	}

	/** Configures a route with any arguments, as the gateway does when it builds the filter. */
	void configureRoute(String routeId, Map<String, Object> args) {
		this.context.publishEvent(new FilterArgsEvent(this, routeId, args));
	}

	<T> T bean(Class<T> type) {
		return this.context.getBean(type);
	}

	/** The script the library last ran, as sent; only for a recording library. */
	ScriptRecorder.ScriptCall lastCall() {
		ScriptRecorder.ScriptCall call = (this.recorder != null) ? this.recorder.lastCall() : null;
		if (call == null) {
			throw new IllegalStateException("No script run recorded");
		}
		return call;
	}

	@Override
	public void close() {
		this.context.close();
		this.connectionFactory.destroy();
	}

}
