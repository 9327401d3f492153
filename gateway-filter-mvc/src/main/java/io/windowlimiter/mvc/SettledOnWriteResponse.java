package io.windowlimiter.mvc;

import java.io.IOException;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * A response that settles its request as its writing starts (status and headers known, nothing of the body
 * written yet), so the client's next request finds the settle made. Only the response the client gets is
 * written: an attempt a {@code Retry} filter discarded never settles.
 */
final class SettledOnWriteResponse extends DelegatingServerResponse {

	private final Runnable settle;

	SettledOnWriteResponse(ServerResponse delegate, Runnable settle) {
		super(delegate);
		this.settle = settle;
	}

	@Override
	public @Nullable ModelAndView writeTo(HttpServletRequest request, HttpServletResponse response, Context context)
			throws ServletException, IOException {
		this.settle.run();
		return this.delegate.writeTo(request, response, context);
	}

}
