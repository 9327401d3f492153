package io.windowlimiter.gateway.operations;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.windowlimiter.core.operations.AssignmentRequest;
import io.windowlimiter.core.operations.RateLimitsBodyFields;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Refuses a POST to the {@code ratelimits} endpoint whose body has a field the endpoint does not take or a field
 * twice, before Boot reads it (Boot drops unknown fields and keeps the last of two): 400 naming the field, as the
 * endpoint answers every mistake, and nothing applied ({@link RateLimitsBodyFields}). Only POSTs under the
 * endpoint's own path; the body, at most {@link #MAX_BYTES}, is read once and handed on as it came.
 */
public class RateLimitsBodyFilter implements WebFilter, Ordered {

	/** The largest body read: Boot's own codecs refuse a larger one (256 KB); the endpoint's are a few fields. */
	static final int MAX_BYTES = 256 * 1024;

	private static final JsonFactory JSON = new JsonFactory();

	/** The endpoint's path within the application, e.g. {@code /actuator/ratelimits}; asked once Boot knows it. */
	private final Supplier<String> endpointPath;

	public RateLimitsBodyFilter(Supplier<String> endpointPath) {
		this.endpointPath = endpointPath;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpRequest request = exchange.getRequest();
		String target = (request.getMethod() == HttpMethod.POST) ? target(request.getPath().pathWithinApplication().value())
				: null;
		if (target == null) {
			return chain.filter(exchange);
		}
		return DataBufferUtils.join(request.getBody(), MAX_BYTES).map(buffer -> {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			DataBufferUtils.release(buffer);
			return bytes;
		}).defaultIfEmpty(new byte[0]).onErrorResume(DataBufferLimitException.class, ex -> Mono.just(new byte[0]))
			.flatMap(bytes -> {
				List<String> names = topLevelNames(bytes);
				AssignmentRequest.InvalidAssignmentException refusal = (names != null)
						? RateLimitsBodyFields.refusal(target, names) : null;
				if (refusal != null) {
					return refuse(exchange, refusal);
				}
				return chain.filter(exchange.mutate().request(withBody(request, bytes, exchange)).build());
			});
	}

	/** The target of a POST to the endpoint's {@code {target}/{client}}; null for any other path. */
	private @Nullable String target(String path) {
		String prefix = this.endpointPath.get() + "/";
		if (!path.startsWith(prefix)) {
			return null;
		}
		String rest = path.substring(prefix.length());
		int slash = rest.indexOf('/');
		return (slash > 0 && slash + 1 < rest.length()) ? rest.substring(0, slash) : null;
	}

	/**
	 * The top-level field names of a JSON object, in order, duplicates kept; null when the body is not one JSON
	 * object of plain values (Boot refuses it then, answered by {@link RateLimitsBodyAdvice}).
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

	private static Mono<Void> refuse(ServerWebExchange exchange, AssignmentRequest.InvalidAssignmentException refusal) {
		Map<String, String> body = new LinkedHashMap<>();
		body.put("error", refusal.getMessage());
		body.put("field", refusal.getField());
		byte[] json = JsonMapper.shared().writeValueAsBytes(body);
		exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
		exchange.getResponse().getHeaders().setContentType(MediaType.APPLICATION_JSON);
		return exchange.getResponse().writeWith(Mono.just(exchange.getResponse().bufferFactory().wrap(json)));
	}

	/** The request with the body already read, as it came. */
	private static ServerHttpRequest withBody(ServerHttpRequest request, byte[] bytes, ServerWebExchange exchange) {
		return new ServerHttpRequestDecorator(request) {

			@Override
			public Flux<DataBuffer> getBody() {
				return (bytes.length == 0) ? Flux.empty()
						: Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(bytes)));
			}

		};
	}

	/** After Spring Security's filters (-100): a caller it does not let in gets its 401, not this 400. */
	@Override
	public int getOrder() {
		return 0;
	}

}
