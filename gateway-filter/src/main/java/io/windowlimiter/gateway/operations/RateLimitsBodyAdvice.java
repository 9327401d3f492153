package io.windowlimiter.gateway.operations;

import java.util.List;
import java.util.Map;

import io.windowlimiter.core.operations.AssignmentRequest;
import io.windowlimiter.core.operations.RateLimitsEndpoint;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;

import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;

/**
 * The {@code ratelimits} endpoint's 400 for a POST body Boot cannot hand to it (a list or an object as a
 * field's value, a body that is no JSON object): Boot refuses such a body before the endpoint is reached, with
 * its own error body that names nothing. This answers it as the endpoint answers every mistake, naming the field
 * and what is allowed. Only actuator endpoints' handlers (Boot's package) and only this endpoint's POSTs; any
 * other refusal goes on to Boot's error handling as before.
 */
@ControllerAdvice(basePackages = "org.springframework.boot.webflux.actuate.endpoint.web")
public class RateLimitsBodyAdvice {

	@ExceptionHandler(ServerWebInputException.class)
	public ResponseEntity<Map<String, String>> unreadable(ServerWebInputException ex, ServerWebExchange exchange)
			throws ServerWebInputException {
		String target = (exchange.getRequest().getMethod() == HttpMethod.POST)
				? target(exchange.getRequest().getPath().value()) : null;
		if (target == null) {
			throw ex;
		}
		AssignmentRequest.InvalidAssignmentException invalid = AssignmentRequest.unreadable(target, field(ex));
		return ResponseEntity.badRequest().body(Map.of("error", invalid.getMessage(), "field", invalid.getField()));
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
