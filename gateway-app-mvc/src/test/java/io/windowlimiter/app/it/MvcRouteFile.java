package io.windowlimiter.app.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The routes a test gives the Server MVC gateway, as a YAML file for {@code --spring.config.additional-location}:
 * each sends {@code /<id>/**} to the test's downstream, limited per {@code X-API-Key} by a {@code WindowRateLimit}
 * filter with the given args (the same names as gateway-app's {@link RouteFile} takes, without prefix).
 */
final class MvcRouteFile {

	private final String downstream;

	private final StringBuilder yaml = new StringBuilder("spring.cloud.gateway.server.webmvc.routes:\n");

	MvcRouteFile(String downstream) {
		this.downstream = downstream;
	}

	MvcRouteFile route(String id, Map<String, Object> args) {
		return route(id, this.downstream, args);
	}

	/** A route to another upstream than the test's downstream (an LLM's). */
	MvcRouteFile route(String id, String uri, Map<String, Object> args) {
		return route(id, uri, "headerKeyResolver", args);
	}

	/** As {@link #route(String, Map)}, keyed by the named {@code MvcKeyResolver} bean, e.g. {@code clientIpKeyResolver}. */
	MvcRouteFile route(String id, String uri, String keyResolver, Map<String, Object> args) {
		this.yaml.append("  - id: ").append(id).append('\n')
			.append("    uri: ").append(uri).append('\n')
			.append("    predicates: [ \"Path=/").append(id).append("/**\" ]\n")
			.append("    filters:\n")
			.append("      - name: WindowRateLimit\n")
			.append("        args:\n")
			.append("          key-resolver: ").append(keyResolver).append('\n');
		args.forEach((name, value) -> this.yaml.append("          ").append(name).append(": ").append(value).append('\n'));
		return this;
	}

	/** Routes written out in YAML, as list items indented by two spaces (application.yml's, which this list replaces). */
	MvcRouteFile raw(String routes) {
		this.yaml.append(routes);
		return this;
	}

	Path write() {
		try {
			Path file = Files.createTempFile("gateway-mvc-it-routes", ".yml");
			Files.writeString(file, this.yaml);
			file.toFile().deleteOnExit();
			return file;
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
