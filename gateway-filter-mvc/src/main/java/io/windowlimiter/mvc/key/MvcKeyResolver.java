package io.windowlimiter.mvc.key;

import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/**
 * Which client a request on a Server MVC route counts against. Routes name one by its bean name
 * ({@code key-resolver: clientIpKeyResolver}): Server MVC's YAML has no SpEL. Called on the request's
 * thread; it must not block.
 */
@FunctionalInterface
public interface MvcKeyResolver {

	/**
	 * The client's key; {@code null} or blank for none: refused with 403, or with {@code deny-empty-key: false}
	 * counted with the route's other keyless requests under one shared key.
	 */
	@Nullable String resolve(ServerRequest request);

}
