package io.windowlimiter.gateway.key;

import io.windowlimiter.core.key.ApiKeys;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.key.KeySource;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;

/**
 * Keys a request by its API key as the official SDKs send it ({@link ApiKeys}): the token of
 * {@code Authorization: Bearer}, else {@code x-api-key}, else {@code api-key}. The keys are credentials: the
 * limiter hashes them where they enter it, so none is kept or shown in clear. No key gives no key (refused
 * with 403 unless the route lets keyless requests share one quota). Headers carrying different keys are a
 * {@link io.windowlimiter.core.key.ConflictingCredentialsException}, which the {@code WindowRateLimit} filter
 * answers 400 naming them.
 */
public class ApiKeyResolver implements KeyResolver, CredentialKeys, KeySource {

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		HttpHeaders headers = exchange.getRequest().getHeaders();
		// different keys in its headers: an error, which the WindowRateLimit filter answers 400
		return Mono.fromCallable(() -> ApiKeys.of(headers::get));
	}

	@Override
	public boolean keysAreCredentials() {
		return true;
	}

	@Override
	public String keySource() {
		return ApiKeys.SOURCE;
	}

}
