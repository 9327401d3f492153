package io.windowlimiter.demo;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;
import redis.embedded.RedisServer;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Starts an embedded Redis server and points {@code spring.data.redis.host} and {@code .port} at it
 * when no Redis is configured, so the gateway runs out of the box. Rate limits then hold for this
 * instance only. Configuring Redis (any of {@link #REDIS_PROPERTIES}) or setting
 * {@code gateway-app.embedded-redis.enabled=false} turns it off.
 *
 * <p>There is at most one server per JVM, however many application contexts ask for it (test
 * contexts, bootstrap and child contexts): the first starts it, the last to close stops it, and it is
 * stopped at JVM shutdown in any case.
 */
public class EmbeddedRedisEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	/** Set to {@code false} to never start an embedded server. */
	public static final String ENABLED_PROPERTY = "gateway-app.embedded-redis.enabled";

	/**
	 * Any of these means Redis is configured. A port alone counts too: it means a Redis on localhost,
	 * which the embedded server's port would silently replace.
	 */
	static final List<String> REDIS_PROPERTIES = List.of("spring.data.redis.host", "spring.data.redis.port",
			"spring.data.redis.url", "spring.data.redis.cluster.nodes", "spring.data.redis.sentinel.master",
			"spring.data.redis.masterreplica.nodes");

	public static final String PROPERTY_SOURCE_NAME = "embeddedRedis";

	public static final String HOST = "127.0.0.1";

	private static final Object lock = new Object();

	private static @Nullable RedisServer server;

	private static int port;

	private static int users;

	private static boolean shutdownHookAdded;

	private final Log logger;

	public EmbeddedRedisEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(EmbeddedRedisEnvironmentPostProcessor.class);
	}

	@Override
	public int getOrder() {
		// Last, so that config data and everything else that may configure Redis has been applied.
		return Ordered.LOWEST_PRECEDENCE;
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getProperty(ENABLED_PROPERTY, Boolean.class, true) || redisConfigured(environment)) {
			return;
		}
		int serverPort = acquire();
		application.addListeners(new ReleaseOnClose(application));
		environment.getPropertySources()
			.addLast(new MapPropertySource(PROPERTY_SOURCE_NAME,
					Map.of("spring.data.redis.host", HOST, "spring.data.redis.port", serverPort)));
		this.logger.warn("No Redis configured: using an embedded Redis server on " + HOST + ":" + serverPort
				+ ". Rate limits hold for this instance only. Configure spring.data.redis.* (host, url, "
				+ "cluster.nodes or sentinel.master) to share them between instances; that turns this off.");
	}

	static boolean redisConfigured(ConfigurableEnvironment environment) {
		// "[0]": a list given in YAML (cluster.nodes) arrives as indexed properties.
		return REDIS_PROPERTIES.stream()
			.anyMatch(name -> environment.containsProperty(name) || environment.containsProperty(name + "[0]"));
	}

	private static int acquire() {
		synchronized (lock) {
			if (server == null) {
				start();
			}
			users++;
			return port;
		}
	}

	private static void release() {
		synchronized (lock) {
			users--;
			if (users <= 0) {
				users = 0;
				stop();
			}
		}
	}

	private static void start() {
		IOException failure = null;
		// The free port could be taken before Redis binds it; another one will do.
		for (int attempt = 0; attempt < 3; attempt++) {
			int candidate = freePort();
			try {
				RedisServer started = RedisServer.newRedisServer()
					.port(candidate)
					.bind(HOST)
					// The counts live for a window or two: nothing is worth writing to disk.
					.setting("save \"\"")
					.setting("appendonly no")
					.build();
				started.start();
				server = started;
				port = candidate;
				if (!shutdownHookAdded) {
					Runtime.getRuntime()
						.addShutdownHook(new Thread(EmbeddedRedisEnvironmentPostProcessor::stopAtExit,
								"embedded-redis-shutdown"));
					shutdownHookAdded = true;
				}
				return;
			}
			catch (IOException ex) {
				failure = ex;
			}
		}
		throw new IllegalStateException("Could not start an embedded Redis server. Configure spring.data.redis.* "
				+ "to use your own Redis, or set " + ENABLED_PROPERTY + "=false", failure);
	}

	private static void stopAtExit() {
		synchronized (lock) {
			stop();
		}
	}

	private static void stop() {
		if (server != null) {
			try {
				server.stop();
			}
			catch (IOException ex) {
				// Nothing left to do about it; the process dies with the JVM at the latest.
			}
			server = null;
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException("No free port for an embedded Redis server", ex);
		}
	}

	/**
	 * Gives the server back when the application that asked for it is done: its context closed, or
	 * its start failed. Only once, and only for its own context (a child context's close event reaches
	 * the parent too).
	 */
	static final class ReleaseOnClose implements ApplicationListener<ApplicationEvent>, ApplicationContextAware {

		private final SpringApplication application;

		private final AtomicBoolean released = new AtomicBoolean();

		private @Nullable ApplicationContext context;

		ReleaseOnClose(SpringApplication application) {
			this.application = application;
		}

		@Override
		public void setApplicationContext(ApplicationContext context) {
			this.context = context;
		}

		@Override
		public void onApplicationEvent(ApplicationEvent event) {
			boolean closed = event instanceof ContextClosedEvent closedEvent
					&& closedEvent.getApplicationContext() == this.context;
			boolean failed = event instanceof ApplicationFailedEvent failedEvent
					&& failedEvent.getSpringApplication() == this.application;
			if ((closed || failed) && this.released.compareAndSet(false, true)) {
				release();
			}
		}

	}

}
