package io.windowlimiter.mvc.key;

import io.windowlimiter.core.key.ApiKeys;
import io.windowlimiter.core.key.CredentialKeys;
import io.windowlimiter.core.key.KeySource;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.ServerRequest;

/**
 * Keys a request by one header's value, such as an API key; no header (or a blank one) gives no key. When the
 * header carries credentials (by default {@code Authorization}, {@code Proxy-Authorization}, {@code X-API-Key},
 * {@code api-key}, {@code Cookie}), its keys are hashed where they enter the limiter ({@link CredentialKeys}).
 */
public class HeaderMvcKeyResolver implements MvcKeyResolver, CredentialKeys, KeySource {

	private final String headerName;

	private final boolean credentials;

	/** A resolver of the header, whose keys are credentials if it is one of {@link ApiKeys#CREDENTIAL_HEADERS}. */
	public HeaderMvcKeyResolver(String headerName) {
		this(headerName, ApiKeys.isCredentialHeader(headerName, ApiKeys.CREDENTIAL_HEADERS));
	}

	/** @param credentials whether the header's values are credentials */
	public HeaderMvcKeyResolver(String headerName, boolean credentials) {
		this.headerName = headerName;
		this.credentials = credentials;
	}

	@Override
	public @Nullable String resolve(ServerRequest request) {
		return request.headers().firstHeader(this.headerName);
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
