package io.windowlimiter.mvc.operations;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.operations.AssignmentRequest;
import io.windowlimiter.core.operations.RateLimitsBodyFields;
import io.windowlimiter.core.operations.RateLimitsEndpoint;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;

import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.mvc.method.annotation.RequestBodyAdvice;

/**
 * The {@code ratelimits} endpoint's 400 for a POST body Boot cannot hand to it, on a servlet server, as the
 * WebFlux one answers it: Boot refuses a list or an object as a field's value, or a body that is no JSON object,
 * before the endpoint is reached, with an error body that names nothing; this names the field and what is
 * allowed. And it refuses a body with a field the endpoint does not take, or a field twice, before Boot reads it
 * (Boot drops unknown fields and keeps the last of two): 400 naming the field, nothing applied
 * ({@link RateLimitsBodyFields}). Only actuator endpoints' handlers (Boot's package) and only this endpoint's POSTs.
 */
@ControllerAdvice(basePackages = "org.springframework.boot.webmvc.actuate.endpoint.web")
public class RateLimitsBodyMvcAdvice implements RequestBodyAdvice {

	/** The largest body checked, as on WebFlux; a larger one goes on to Boot unchecked. */
	static final int MAX_BYTES = 256 * 1024;

	private static final JsonFactory JSON = new JsonFactory();

	@ExceptionHandler(HttpMessageNotReadableException.class)
	public ResponseEntity<Map<String, String>> unreadable(HttpMessageNotReadableException ex, HttpServletRequest request)
			throws HttpMessageNotReadableException {
		String target = "POST".equals(request.getMethod()) ? target(request.getRequestURI()) : null;
		if (target == null) {
			throw ex;
		}
		AssignmentRequest.InvalidAssignmentException invalid = AssignmentRequest.unreadable(target, field(ex));
		return ResponseEntity.badRequest().body(Map.of("error", invalid.getMessage(), "field", invalid.getField()));
	}

	/** A body refused for an unknown or a duplicated field, answered as every mistake of the endpoint. */
	@ExceptionHandler(AssignmentRequest.InvalidAssignmentException.class)
	public ResponseEntity<Map<String, String>> refused(AssignmentRequest.InvalidAssignmentException ex) {
		return ResponseEntity.badRequest().body(Map.of("error", ex.getMessage(), "field", ex.getField()));
	}

	@Override
	public boolean supports(MethodParameter parameter, Type targetType,
			Class<? extends HttpMessageConverter<?>> converterType) {
		return true;
	}

	@Override
	public HttpInputMessage beforeBodyRead(HttpInputMessage input, MethodParameter parameter, Type targetType,
			Class<? extends HttpMessageConverter<?>> converterType) throws IOException {
		HttpServletRequest request = (RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes)
				? attributes.getRequest() : null;
		String target = (request != null && "POST".equals(request.getMethod())) ? target(request.getRequestURI()) : null;
		if (target == null) {
			return input;
		}
		InputStream body = input.getBody();
		byte[] bytes = body.readNBytes(MAX_BYTES + 1);
		if (bytes.length > MAX_BYTES) {
			return message(input.getHeaders(), new SequenceInputStream(new ByteArrayInputStream(bytes), body));
		}
		List<String> names = topLevelNames(bytes);
		AssignmentRequest.InvalidAssignmentException refusal = (names != null)
				? RateLimitsBodyFields.refusal(target, names) : null;
		if (refusal != null) {
			throw refusal;
		}
		return message(input.getHeaders(), new ByteArrayInputStream(bytes));
	}

	@Override
	public Object afterBodyRead(Object body, HttpInputMessage input, MethodParameter parameter, Type targetType,
			Class<? extends HttpMessageConverter<?>> converterType) {
		return body;
	}

	@Override
	public @Nullable Object handleEmptyBody(@Nullable Object body, HttpInputMessage input, MethodParameter parameter,
			Type targetType, Class<? extends HttpMessageConverter<?>> converterType) {
		return body;
	}

	private static HttpInputMessage message(HttpHeaders headers, InputStream body) {
		return new HttpInputMessage() {

			@Override
			public InputStream getBody() {
				return body;
			}

			@Override
			public HttpHeaders getHeaders() {
				return headers;
			}

		};
	}

	/**
	 * The top-level field names of a JSON object, in order, duplicates kept; null when the body is not one JSON
	 * object of plain values (Boot refuses it then, answered by {@link #unreadable}).
	 */
	static @Nullable List<String> topLevelNames(byte[] body) {
		if (body.length == 0) {
			return null;
		}
		List<String> names = new ArrayList<>();
		try (JsonParser parser = JSON.createParser(ObjectReadContext.empty(), body)) {
			if (parser.nextToken() != JsonToken.START_OBJECT) {
				return null;
			}
			for (JsonToken token = parser.nextToken(); token == JsonToken.PROPERTY_NAME; token = parser.nextToken()) {
				names.add(parser.currentName());
				JsonToken value = parser.nextToken();
				if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
					// Boot refuses a body with a list or an object as a value, before the endpoint, naming it
					return null;
				}
			}
			return names;
		}
		catch (JacksonException ex) {
			return null;
		}
	}

	/** The target of a POST to {@code .../ratelimits/{target}/{client}}; null for any other path. */
	static @Nullable String target(String path) {
		List<String> segments = List.of(path.split("/"));
		int at = segments.indexOf(RateLimitsEndpoint.ID);
		return (at >= 0 && at + 2 < segments.size() && !segments.get(at + 1).isEmpty()) ? segments.get(at + 1) : null;
	}

	/** The body's top-level field whose value could not be read as text, as Jackson's path names it; else null. */
	static @Nullable String field(Throwable error) {
		for (Throwable cause = error; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof JacksonException jackson && !jackson.getPath().isEmpty()) {
				return jackson.getPath().get(0).getPropertyName();
			}
		}
		return null;
	}

}
