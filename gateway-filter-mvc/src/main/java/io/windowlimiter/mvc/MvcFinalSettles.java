package io.windowlimiter.mvc;

import java.io.IOException;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;

/**
 * Settles, when a request's handling ends, what no written response settled ({@link MvcAttempts}): a request
 * whose every attempt a {@code Retry} filter discarded and then gave up on with an exception, a call the proxy
 * failed. It wraps the dispatcher servlet, so it runs before the server writes an error answer (an exception
 * thrown through it, a {@code sendError}), and the client's next request finds the settle made.
 */
public final class MvcFinalSettles implements Filter {

	@Override
	public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
			throws IOException, ServletException {
		try {
			chain.doFilter(request, response);
		}
		finally {
			MvcAttempts.settleUnsettled(request);
		}
	}

}
