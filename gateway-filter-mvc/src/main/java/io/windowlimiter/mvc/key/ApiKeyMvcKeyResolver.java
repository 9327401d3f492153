package io.windowlimiter.mvc.key;

import io.windowlimiter.core.key.ApiKeys;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.key.KeySource;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/**
 * Keys a request by its API key as the official SDKs send it ({@link ApiKeys}): the token of
 * {@code Authorization: Bearer}, else {@code x-api-key}, else {@code api-key}. The keys are credentials: the
 * limiter hashes them where they enter it, so none is kept or shown in clear. No key gives no key. Headers
 * carrying different keys throw {@link io.windowlimiter.core.key.ConflictingCredentialsException}, which the
 * {@code WindowRateLimit} filter answers 400 naming them.
 */
public class ApiKeyMvcKeyResolver implements MvcKeyResolver, CredentialKeys, KeySource {

	@Override
	public @Nullable String resolve(ServerRequest request) {
		ServerRequest.Headers headers = request.headers();
		// different keys in its headers: thrown, and answered 400 by the WindowRateLimit filter
		return ApiKeys.of(headers::header);
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
