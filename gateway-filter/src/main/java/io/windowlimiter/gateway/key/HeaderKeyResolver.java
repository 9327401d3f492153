package io.windowlimiter.gateway.key;

import io.windowlimiter.core.key.ApiKeys;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.key.KeySource;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.util.StringUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * Keys a request by one header's value, such as an API key. No header (or a blank one) gives no key,
 * which the {@code RequestRateLimiter} filter refuses with 403 under its deny-empty-key rule. When the
 * header carries credentials (by default {@code Authorization}, {@code Proxy-Authorization},
 * {@code X-API-Key}, {@code api-key}, {@code Cookie}), its keys are hashed where they enter the limiter
 * ({@link CredentialKeys}).
 */
public class HeaderKeyResolver implements KeyResolver, CredentialKeys, KeySource {

	/** The header used unless another is configured. */
	public static final String DEFAULT_HEADER = "X-API-Key";

	private final String headerName;

	private final boolean credentials;

	/** A resolver of the header, whose keys are credentials if it is one of {@link ApiKeys#CREDENTIAL_HEADERS}. */
	public HeaderKeyResolver(String headerName) {
		this(headerName, ApiKeys.isCredentialHeader(headerName, ApiKeys.CREDENTIAL_HEADERS));
	}

	/** @param credentials whether the header's values are credentials */
	public HeaderKeyResolver(String headerName, boolean credentials) {
		this.headerName = headerName;
		this.credentials = credentials;
	}

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		String value = exchange.getRequest().getHeaders().getFirst(this.headerName);
		return StringUtils.hasText(value) ? Mono.just(value) : Mono.empty();
	}

	@Override
	public String keySource() {
		return "the " + this.headerName + " header";
	}

	@Override
	public boolean keysAreCredentials() {
		return this.credentials;
	}

}
