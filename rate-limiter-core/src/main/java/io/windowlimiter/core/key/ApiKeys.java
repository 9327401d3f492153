package io.windowlimiter.core.key;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The API key of a request, where the official SDKs of the LLM providers and most API clients send it:
 * {@code Authorization: Bearer <key>} (OpenAI, and Anthropic with an OAuth token), else {@code x-api-key}
 * (Anthropic), else {@code api-key} (Azure OpenAI). The key is the token alone, without the scheme, so a
 * client is one client whichever of the headers it uses. No key (or an {@code Authorization} of another
 * scheme, such as Basic, and neither other header): none.
 */
public final class ApiKeys {

	/**
	 * The headers whose values are credentials, by default: a {@code headerKeyResolver} reading one hashes its
	 * keys ({@link CredentialKeys}). Matched whatever their case.
	 */
	public static final List<String> CREDENTIAL_HEADERS = List.of("Authorization", "Proxy-Authorization", "X-API-Key",
			"api-key", "Cookie");

	static final String AUTHORIZATION = "Authorization";

	static final String X_API_KEY = "x-api-key";

	static final String API_KEY = "api-key";

	private static final String BEARER = "bearer ";

	private ApiKeys() {
	}

	/**
	 * @param firstHeader the request's first value of a header, by name (whatever its case), or null
	 * @return the key, or null when the request has none
	 */
	public static @Nullable String of(Function<String, @Nullable String> firstHeader) {
		String authorization = firstHeader.apply(AUTHORIZATION);
		if (authorization != null && authorization.length() > BEARER.length()
				&& authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
			String token = authorization.substring(BEARER.length()).strip();
			if (!token.isEmpty()) {
				return token;
			}
		}
		for (String header : new String[] { X_API_KEY, API_KEY }) {
			String value = firstHeader.apply(header);
			if (value != null && !value.isBlank()) {
				return value.strip();
			}
		}
		return null;
	}

	/** Whether the header is one of {@code credentialHeaders}, whatever the case of either. */
	public static boolean isCredentialHeader(String header, List<String> credentialHeaders) {
		String name = header.strip().toLowerCase(Locale.ROOT);
		return credentialHeaders.stream().anyMatch(credential -> credential.strip().toLowerCase(Locale.ROOT).equals(name));
	}

}
