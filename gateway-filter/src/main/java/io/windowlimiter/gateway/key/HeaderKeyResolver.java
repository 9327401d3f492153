package io.windowlimiter.gateway.key;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.util.StringUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * Keys a request by one header's value, such as an API key. No header (or a blank one) gives no key,
 * which the {@code RequestRateLimiter} filter refuses with 403 under its deny-empty-key rule.
 */
public class HeaderKeyResolver implements KeyResolver {

	/** The header used unless another is configured. */
	public static final String DEFAULT_HEADER = "X-API-Key";

	private final String headerName;

	public HeaderKeyResolver(String headerName) {
		this.headerName = headerName;
	}

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		String value = exchange.getRequest().getHeaders().getFirst(this.headerName);
		return StringUtils.hasText(value) ? Mono.just(value) : Mono.empty();
	}

}
