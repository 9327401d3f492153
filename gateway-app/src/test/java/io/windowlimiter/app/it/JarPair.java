package io.windowlimiter.app.it;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import io.windowlimiter.gateway.test.RedisProcess;

/**
 * Two packaged gateway-app jars ({@link GatewayJar}) on one real {@code redis-server}, in front of one
 * {@link JdkDownstream}, with the routes a test writes: the set-up most jar ITs share. Closing it stops
 * the jars, the downstream and Redis, whatever of them started.
 */
final class JarPair implements AutoCloseable {

	private final RedisProcess redis;

	private final JdkDownstream downstream;

	private final Path routes;

	private final List<GatewayJar> gateways;

	private JarPair(RedisProcess redis, JdkDownstream downstream, Path routes, List<GatewayJar> gateways) {
		this.redis = redis;
		this.downstream = downstream;
		this.routes = routes;
		this.gateways = gateways;
	}

	/**
	 * Starts Redis and the downstream, lets {@code routes} write the route file, then starts jars
	 * {@code <name>-a} and {@code <name>-b} at once (as a deployment's instances start), with the same arguments.
	 * @param args more {@code --name=value} arguments, e.g. to expose an actuator endpoint
	 */
	static JarPair start(String name, Consumer<RouteFile> routes, List<String> args) {
		RedisProcess redis = RedisProcess.launch();
		JdkDownstream downstream = null;
		List<GatewayJar> started = new ArrayList<>();
		try {
			downstream = JdkDownstream.start();
			RouteFile file = new RouteFile(downstream.uri());
			routes.accept(file);
			Path written = file.write();
			started.addAll(GatewayJar.startAll(redis.port(), written, args, name + "-a", name + "-b"));
			return new JarPair(redis, downstream, written, List.copyOf(started));
		}
		catch (RuntimeException ex) {
			started.forEach(GatewayJar::close);
			if (downstream != null) {
				downstream.close();
			}
			redis.close();
			throw ex;
		}
	}

	GatewayJar a() {
		return this.gateways.get(0);
	}

	GatewayJar b() {
		return this.gateways.get(1);
	}

	List<GatewayJar> both() {
		return this.gateways;
	}

	int redisPort() {
		return this.redis.port();
	}

	/** The downstream's URI, for a route file of a jar a test starts itself. */
	String downstream() {
		return this.downstream.uri();
	}

	/** The route file both jars were started with. */
	Path routes() {
		return this.routes;
	}

	@Override
	public void close() {
		this.gateways.forEach(GatewayJar::close);
		this.downstream.close();
		this.redis.close();
	}

}
