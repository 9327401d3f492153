package io.windowlimiter.mvc.key;

import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/** Keys a request by one header's value, such as an API key; no header (or a blank one) gives no key. */
public class HeaderMvcKeyResolver implements MvcKeyResolver {

	private final String headerName;

	public HeaderMvcKeyResolver(String headerName) {
		this.headerName = headerName;
	}

	@Override
	public @Nullable String resolve(ServerRequest request) {
		return request.headers().firstHeader(this.headerName);
	}

}
