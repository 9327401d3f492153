package io.windowlimiter.mvc.key;

import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/**
 * Keys a request by the authenticated principal's name (the servlet request's user principal, which
 * Spring Security sets); an anonymous request has no key.
 */
public class PrincipalMvcKeyResolver implements MvcKeyResolver {

	@Override
	public @Nullable String resolve(ServerRequest request) {
		return request.principal().map(java.security.Principal::getName).orElse(null);
	}

}
