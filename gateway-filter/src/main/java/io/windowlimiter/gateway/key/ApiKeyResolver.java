package io.windowlimiter.gateway.key;

import io.windowlimiter.core.key.ApiKeys;
import io.windowlimiter.core.key.CredentialKeys;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;

/**
 * Keys a request by its API key as the official SDKs send it ({@link ApiKeys}): the token of
 * {@code Authorization: Bearer}, else {@code x-api-key}, else {@code api-key}. The keys are credentials: the
 * limiter hashes them where they enter it, so none is kept or shown in clear. No key gives no key (refused
 * with 403 unless the route lets keyless requests share one quota).
 */
public class ApiKeyResolver implements KeyResolver, CredentialKeys {

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		HttpHeaders headers = exchange.getRequest().getHeaders();
		return Mono.justOrEmpty(ApiKeys.of(headers::getFirst));
	}

	@Override
	public boolean keysAreCredentials() {
		return true;
	}

}
