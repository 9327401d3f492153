package io.windowlimiter.mvc.plan;

import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/** The plan a trusted header names ({@code window-rate-limiter.plan-header}, with {@code plan-header-trusted}). */
public class HeaderMvcPlanResolver implements MvcPlanResolver {

	private final String headerName;

	public HeaderMvcPlanResolver(String headerName) {
		this.headerName = headerName;
	}

	@Override
	public @Nullable String resolve(ServerRequest request) {
		return request.headers().firstHeader(this.headerName);
	}

}
