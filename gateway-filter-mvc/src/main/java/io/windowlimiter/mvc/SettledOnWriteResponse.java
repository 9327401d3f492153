package io.windowlimiter.mvc;

import java.io.IOException;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.util.MultiValueMap;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * A response that settles its request as its writing starts (status and headers known, nothing of the body
 * written yet), so the client's next request finds the settle made. Only the response the client gets is
 * written: an attempt a {@code Retry} filter discarded never settles.
 */
final class SettledOnWriteResponse implements ServerResponse {

	private final ServerResponse delegate;

	private final Runnable settle;

	SettledOnWriteResponse(ServerResponse delegate, Runnable settle) {
		this.delegate = delegate;
		this.settle = settle;
	}

	@Override
	public HttpStatusCode statusCode() {
		return this.delegate.statusCode();
	}

	@Override
	public HttpHeaders headers() {
		return this.delegate.headers();
	}

	@Override
	public MultiValueMap<String, Cookie> cookies() {
		return this.delegate.cookies();
	}

	@Override
	public @Nullable ModelAndView writeTo(HttpServletRequest request, HttpServletResponse response, Context context)
			throws ServletException, IOException {
		this.settle.run();
		return this.delegate.writeTo(request, response, context);
	}

}
