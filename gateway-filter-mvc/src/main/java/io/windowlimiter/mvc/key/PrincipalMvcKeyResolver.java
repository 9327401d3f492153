package io.windowlimiter.mvc.key;

import io.windowlimiter.core.key.KeySource;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/**
 * Keys a request by the authenticated principal's name (the servlet request's user principal, which
 * Spring Security sets); an anonymous request has no key.
 */
public class PrincipalMvcKeyResolver implements MvcKeyResolver, KeySource {

	@Override
	public @Nullable String resolve(ServerRequest request) {
		return request.principal().map(java.security.Principal::getName).orElse(null);
	}

	@Override
	public String keySource() {
		return "an authenticated principal";
	}

}
