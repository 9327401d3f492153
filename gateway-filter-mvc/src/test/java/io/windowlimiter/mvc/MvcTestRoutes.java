package io.windowlimiter.mvc;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A Server MVC route in YAML's property form, with one {@code WindowRateLimit} filter keyed by the
 * {@code headerKeyResolver} bean: the shape every MVC test's routes take, written once.
 */
final class MvcTestRoutes {

	private MvcTestRoutes() {
	}

	/**
	 * The properties of route {@code index}, matching {@code /<id>/**}.
	 * @param args the filter's arguments, each {@code name=value} (e.g. {@code limits[1].window=1h})
	 */
	static Map<String, Object> route(int index, String id, String uri, String... args) {
		String route = "spring.cloud.gateway.server.webmvc.routes[" + index + "].";
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put(route + "id", id);
		properties.put(route + "uri", uri);
		properties.put(route + "predicates[0]", "Path=/" + id + "/**");
		properties.put(route + "filters[0].name", "WindowRateLimit");
		properties.put(route + "filters[0].args.key-resolver", "headerKeyResolver");
		for (String arg : args) {
			String[] nameValue = arg.split("=", 2);
			properties.put(route + "filters[0].args." + nameValue[0], nameValue[1]);
		}
		return properties;
	}

	/** Adds route {@code index} to a test's dynamic properties. */
	static void register(DynamicPropertyRegistry registry, int index, String id, String uri, String... args) {
		route(index, id, uri, args).forEach((name, value) -> registry.add(name, () -> value));
	}

}
