package io.windowlimiter.gateway;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import io.windowlimiter.core.QuotaProblem;
import io.windowlimiter.core.RateLimitHeaders;

/**
 * Gives a request refused by the window limiter an RFC 9457 {@code application/problem+json} body of
 * the IETF rate-limit draft's {@code quota-exceeded} type, naming the violated policies. The gateway's
 * {@code RequestRateLimiter} filter answers a denial with an empty body, and the limiter cannot reach
 * the response; so the limiter marks a denial with {@link #VIOLATED} and this filter, wrapping the
 * response, turns the mark into the body when the response completes empty. The mark never leaves.
 */
public class ProblemDetailsFilter implements GlobalFilter, Ordered {

	/** The limiter's mark on a refused request: the violated policies' names, as sf-strings. */
	public static final String VIOLATED = "X-Window-Rate-Limiter-Violated";

	/**
	 * The limiter's mark on a request refused for who the client is (a deny list, an operator's block): a
	 * 403 whose body says so, not that a quota was exceeded.
	 */
	public static final String FORBIDDEN = "X-Window-Rate-Limiter-Forbidden";

	/** The draft's problem type for a request over its quota. */
	public static final String QUOTA_EXCEEDED = QuotaProblem.QUOTA_EXCEEDED;

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		return chain.filter(exchange.mutate().response(new ProblemResponse(exchange.getResponse())).build());
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	private static final class ProblemResponse extends ServerHttpResponseDecorator {

		ProblemResponse(ServerHttpResponse delegate) {
			super(delegate);
		}

		@Override
		public Mono<Void> setComplete() {
			if (getHeaders().containsHeader(FORBIDDEN)) {
				getHeaders().remove(FORBIDDEN);
				setStatusCode(HttpStatus.FORBIDDEN);
				return write(FORBIDDEN_BODY);
			}
			String violated = getHeaders().getFirst(VIOLATED);
			if (violated == null) {
				return super.setComplete();
			}
			getHeaders().remove(VIOLATED);
			int status = (getStatusCode() != null) ? getStatusCode().value() : 429;
			return write(problem(status, violated));
		}

		private Mono<Void> write(String problem) {
			byte[] body = problem.getBytes(StandardCharsets.UTF_8);
			getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
			getHeaders().setContentLength(body.length);
			DataBuffer buffer = bufferFactory().wrap(body);
			return super.writeWith(Mono.just(buffer));
		}

		@Override
		public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
			getHeaders().remove(VIOLATED);
			getHeaders().remove(FORBIDDEN);
			return super.writeWith(body);
		}

		@Override
		public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
			getHeaders().remove(VIOLATED);
			getHeaders().remove(FORBIDDEN);
			return super.writeAndFlushWith(body);
		}

	}

	/** RFC 9457's generic problem: the status says it all; no quota was exceeded, so not quota-exceeded. */
	static final String FORBIDDEN_BODY = QuotaProblem.FORBIDDEN;

	static String problem(int status, String violated) {
		return QuotaProblem.json(status, names(violated));
	}

	/** The names in a list of sf-strings, as {@link #mark} writes it. */
	static List<String> names(String mark) {
		List<String> names = new ArrayList<>();
		StringBuilder name = null;
		for (int i = 0; i < mark.length(); i++) {
			char c = mark.charAt(i);
			if (name == null) {
				if (c == '"') {
					name = new StringBuilder();
				}
			}
			else if (c == '\\' && i + 1 < mark.length()) {
				name.append(mark.charAt(++i));
			}
			else if (c == '"') {
				names.add(name.toString());
				name = null;
			}
			else {
				name.append(c);
			}
		}
		return names;
	}

	/** The value of {@link #VIOLATED} for these policy names. */
	public static String mark(List<String> names) {
		StringBuilder mark = new StringBuilder();
		for (String name : names) {
			mark.append(mark.isEmpty() ? "" : ", ").append(RateLimitHeaders.quoted(name));
		}
		return mark.toString();
	}

}
