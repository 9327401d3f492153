package io.windowlimiter.app.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The routes a test gives the gateway, as a YAML file for {@code --spring.config.additional-location}.
 * Each route sends {@code /<id>/**} to the test's downstream, limited per {@code X-API-Key} by the
 * window rate limiter with the given {@code window-rate-limiter.*} args (the route's limits only; no
 * global tuning).
 */
final class RouteFile {

	private final String downstream;

	private final StringBuilder yaml = new StringBuilder("spring.cloud.gateway.server.webflux.routes:\n");

	RouteFile(String downstream) {
		this.downstream = downstream;
	}

	/** A route {@code id} on path {@code /<id>/**}; {@code args} without the {@code window-rate-limiter.} prefix. */
	RouteFile route(String id, Map<String, Object> args) {
		return route(id, "headerKeyResolver", args);
	}

	/** As {@link #route(String, Map)}, keyed by the named resolver bean, e.g. {@code clientIpKeyResolver}. */
	RouteFile route(String id, String keyResolver, Map<String, Object> args) {
		this.yaml.append("  - id: ").append(id).append('\n')
			.append("    uri: ").append(this.downstream).append('\n')
			.append("    predicates: [ \"Path=/").append(id).append("/**\" ]\n")
			.append("    filters:\n")
			.append("      - name: RequestRateLimiter\n")
			.append("        args:\n")
			.append("          rate-limiter: \"#{@windowRateLimiter}\"\n")
			.append("          key-resolver: \"#{@").append(keyResolver).append("}\"\n");
		args.forEach((name, value) -> this.yaml.append("          window-rate-limiter.").append(name).append(": ")
			.append(value).append('\n'));
		return this;
	}

	/**
	 * A route {@code id} on path {@code /<id>/**} with one {@code WindowRateLimit} filter per map of arguments,
	 * written as given (nested lists as {@code limits[i].*} names).
	 */
	RouteFile windowRateLimit(String id, List<Map<String, Object>> filters) {
		return windowRateLimit(id, this.downstream, filters);
	}

	/** As {@link #windowRateLimit(String, List)}, to a downstream of the test's own at {@code uri}. */
	RouteFile windowRateLimit(String id, String uri, List<Map<String, Object>> filters) {
		this.yaml.append("  - id: ").append(id).append('\n')
			.append("    uri: ").append(uri).append('\n')
			.append("    predicates: [ \"Path=/").append(id).append("/**\" ]\n")
			.append("    filters:\n");
		for (Map<String, Object> args : filters) {
			this.yaml.append("      - name: WindowRateLimit\n").append("        args:\n");
			args.forEach((name, value) -> this.yaml.append("          ").append(name).append(": \"").append(value)
				.append("\"\n"));
		}
		return this;
	}

	/** Routes written as given, in the YAML of the route list (each starting {@code "  - id: "}). */
	RouteFile raw(String routes) {
		this.yaml.append(routes);
		return this;
	}

	/** Route args for one limit. */
	static Map<String, Object> limit(String algorithm, int limit, String window) {
		Map<String, Object> args = new LinkedHashMap<>();
		args.put("algorithm", algorithm);
		args.put("limit", limit);
		args.put("window", window);
		return args;
	}

	static Map<String, Object> with(Map<String, Object> args, String name, Object value) {
		Map<String, Object> copy = new LinkedHashMap<>(args);
		copy.put(name, value);
		return copy;
	}

	Path write() {
		try {
			Path file = Files.createTempFile("gateway-it-routes", ".yml");
			Files.writeString(file, this.yaml);
			file.toFile().deleteOnExit();
			return file;
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
