package io.windowlimiter.mvc;

import jakarta.servlet.http.Cookie;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.util.MultiValueMap;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * A route's response as it is, but for how it is written: what the limiter's responses (settled when their writing
 * starts, metered as their body is written) share.
 */
abstract class DelegatingServerResponse implements ServerResponse {

	protected final ServerResponse delegate;

	DelegatingServerResponse(ServerResponse delegate) {
		this.delegate = delegate;
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

}
