package io.windowlimiter.mvc;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import io.windowlimiter.core.BufferedBodies;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpSession;
import jakarta.servlet.http.Part;
import org.jspecify.annotations.Nullable;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.RequestPath;
import org.springframework.util.MultiValueMap;
import org.springframework.validation.BindException;
import org.springframework.web.accept.ApiVersionStrategy;
import org.springframework.web.bind.WebDataBinder;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * The request body of an LLM call, read once at admission (bounded by {@code max-body-bytes}, and counted against
 * the instance's {@link BufferedBodies} as it is read), and the request the proxy sends upstream
 * with it: the body as read, or with {@code stream_options.include_usage} added, its {@code Content-Length},
 * and {@code Accept-Encoding: identity} (a compressed answer cannot be read as it passes). Server MVC's proxy
 * copies the servlet request's input stream upstream, so the request it is given carries a servlet request
 * whose input stream is these bytes; everything else is the filtered request's (headers other filters set
 * included).
 */
final class LlmRequestBody {

	/** What one read asks the servlet input stream for: its buffer's size. */
	private static final int READ_BYTES = 8192;

	private LlmRequestBody() {
	}

	/** What {@link #read} gives for a body longer than allowed (or saying it is): answered 413. */
	static final byte[] TOO_LARGE = new byte[0];

	/** What {@link #read} gives for a body that would take the instance's budget past its bound: answered 503. */
	static final byte[] OVER_BUDGET = new byte[0];

	/**
	 * The body, at most {@code max} bytes, each taken from {@code lease} as it is read; {@link #TOO_LARGE} or
	 * {@link #OVER_BUDGET} (the same arrays, compared by identity) with nothing more read. Either way nothing was
	 * reserved yet; the caller closes the lease.
	 */
	static byte[] read(ServerRequest request, int max, BufferedBodies.Lease lease) throws IOException {
		HttpServletRequest servlet = request.servletRequest();
		if (servlet.getContentLengthLong() > max) {
			return TOO_LARGE;
		}
		InputStream in = servlet.getInputStream();
		// read as it comes, each part taken from the budget before it is kept
		byte[] scratch = new byte[READ_BYTES];
		List<byte[]> parts = new ArrayList<>();
		int total = 0;
		int n;
		while ((n = in.read(scratch)) >= 0) {
			if (total + (long) n > max) {
				return TOO_LARGE;
			}
			if (!lease.take(n)) {
				return OVER_BUDGET;
			}
			parts.add(Arrays.copyOf(scratch, n));
			total += n;
		}
		byte[] body = new byte[total];
		int at = 0;
		for (byte[] part : parts) {
			System.arraycopy(part, 0, body, at, part.length);
			at += part.length;
		}
		return body;
	}

	/** The request to send upstream with {@code body}. */
	static ServerRequest sending(ServerRequest request, byte[] body) {
		ServerRequest withHeaders = ServerRequest.from(request).headers(headers -> {
			headers.set(HttpHeaders.ACCEPT_ENCODING, "identity");
			headers.remove(HttpHeaders.TRANSFER_ENCODING);
			headers.setContentLength(body.length);
		}).build();
		return new WithBody(withHeaders, new BodyServletRequest(request.servletRequest(), body));
	}

	/** A servlet request whose body is the bytes given. */
	private static final class BodyServletRequest extends HttpServletRequestWrapper {

		private final byte[] body;

		private final ServletInputStream in;

		BodyServletRequest(HttpServletRequest request, byte[] body) {
			super(request);
			this.body = body;
			ByteArrayInputStream bytes = new ByteArrayInputStream(body);
			this.in = new ServletInputStream() {

				@Override
				public boolean isFinished() {
					return bytes.available() == 0;
				}

				@Override
				public boolean isReady() {
					return true;
				}

				@Override
				public void setReadListener(ReadListener listener) {
					throw new UnsupportedOperationException("the body was read already: read it blocking");
				}

				@Override
				public int read() {
					return bytes.read();
				}

				@Override
				public int read(byte[] buffer, int offset, int length) {
					return bytes.read(buffer, offset, length);
				}

			};
		}

		@Override
		public ServletInputStream getInputStream() {
			return this.in;
		}

		@Override
		public int getContentLength() {
			return this.body.length;
		}

		@Override
		public long getContentLengthLong() {
			return this.body.length;
		}

	}

	/** The request as filtered, with the servlet request carrying the body. */
	private static final class WithBody implements ServerRequest {

		private final ServerRequest delegate;

		private final HttpServletRequest servletRequest;

		WithBody(ServerRequest delegate, HttpServletRequest servletRequest) {
			this.delegate = delegate;
			this.servletRequest = servletRequest;
		}

		@Override
		public HttpServletRequest servletRequest() {
			return this.servletRequest;
		}

		@Override
		public HttpMethod method() {
			return this.delegate.method();
		}

		@Override
		public URI uri() {
			return this.delegate.uri();
		}

		@Override
		public org.springframework.web.util.UriBuilder uriBuilder() {
			return this.delegate.uriBuilder();
		}

		@Override
		public String path() {
			return this.delegate.path();
		}

		@Override
		public RequestPath requestPath() {
			return this.delegate.requestPath();
		}

		@Override
		public Headers headers() {
			return this.delegate.headers();
		}

		@Override
		public MultiValueMap<String, Cookie> cookies() {
			return this.delegate.cookies();
		}

		@Override
		public Optional<InetSocketAddress> remoteAddress() {
			return this.delegate.remoteAddress();
		}

		@Override
		public List<HttpMessageConverter<?>> messageConverters() {
			return this.delegate.messageConverters();
		}

		@Override
		public @Nullable ApiVersionStrategy apiVersionStrategy() {
			return this.delegate.apiVersionStrategy();
		}

		@Override
		public <T> T body(Class<T> bodyType) throws ServletException, IOException {
			return this.delegate.body(bodyType);
		}

		@Override
		public <T> T body(ParameterizedTypeReference<T> bodyType) throws ServletException, IOException {
			return this.delegate.body(bodyType);
		}

		@Override
		public <T> T bind(Class<T> bindType, Consumer<WebDataBinder> dataBinderCustomizer) throws BindException {
			return this.delegate.bind(bindType, dataBinderCustomizer);
		}

		@Override
		public Optional<Object> attribute(String name) {
			return this.delegate.attribute(name);
		}

		@Override
		public Map<String, Object> attributes() {
			return this.delegate.attributes();
		}

		@Override
		public MultiValueMap<String, String> params() {
			return this.delegate.params();
		}

		@Override
		public MultiValueMap<String, Part> multipartData() throws IOException, ServletException {
			return this.delegate.multipartData();
		}

		@Override
		public Map<String, String> pathVariables() {
			return this.delegate.pathVariables();
		}

		@Override
		public HttpSession session() {
			return this.delegate.session();
		}

		@Override
		public Optional<Principal> principal() {
			return this.delegate.principal();
		}

	}

}
