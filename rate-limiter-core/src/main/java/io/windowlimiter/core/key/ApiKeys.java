package io.windowlimiter.core.key;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The API key of a request, where the official SDKs of the LLM providers and most API clients send it:
 * {@code Authorization: Bearer <key>} (OpenAI, and Anthropic with an OAuth token), else {@code x-api-key}
 * (Anthropic), else {@code api-key} (Azure OpenAI). The key is the token alone, without the scheme, so a
 * client is one client whichever of the headers it uses. No key (or an {@code Authorization} of another
 * scheme, such as Basic, and neither other header): none. Headers that carry different keys are refused
 * ({@link ConflictingCredentialsException}): the upstream reads the one its API names, which need not be the
 * one the request would be counted under.
 */
public final class ApiKeys {

	/**
	 * The headers whose values are credentials, by default: a {@code headerKeyResolver} reading one hashes its
	 * keys ({@link CredentialKeys}). Matched whatever their case.
	 */
	public static final List<String> CREDENTIAL_HEADERS = List.of("Authorization", "Proxy-Authorization", "X-API-Key",
			"api-key", "Cookie");

	/** What an API-key resolver reads, for the answer to a request without one ({@link KeySource}). */
	public static final String SOURCE = "an API key (Authorization: Bearer, x-api-key or api-key header)";

	static final String AUTHORIZATION = "Authorization";

	static final String X_API_KEY = "x-api-key";

	static final String API_KEY = "api-key";

	private static final String BEARER = "bearer ";

	private ApiKeys() {
	}

	/**
	 * @param allValues every value of a header, by name (whatever its case); null or empty when the request has
	 * none
	 * @return the key, or null when the request has none
	 * @throws ConflictingCredentialsException when the headers carry more than one credential (a {@code Bearer}
	 * token, an {@code x-api-key}, an {@code api-key}, or a header repeated with another value): the upstream
	 * could authenticate the request by another than the one it is counted under
	 */
	public static @Nullable String of(Function<String, @Nullable List<String>> allValues) {
		String key = null;
		List<String> carrying = new ArrayList<>(3);
		boolean conflict = false;
		for (String header : new String[] { AUTHORIZATION, X_API_KEY, API_KEY }) {
			List<String> values = allValues.apply(header);
			if (values == null) {
				continue;
			}
			for (String value : values) {
				String credential = credential(header, value);
				if (credential == null) {
					continue;
				}
				if (!carrying.contains(header)) {
					carrying.add(header);
				}
				if (key == null) {
					key = credential;
				}
				else if (!key.equals(credential)) {
					conflict = true;
				}
			}
		}
		if (conflict) {
			throw new ConflictingCredentialsException(carrying);
		}
		return key;
	}

	/** The credential a value of the header carries: a Bearer token without its scheme, a key; null for none. */
	private static @Nullable String credential(String header, @Nullable String value) {
		if (value == null) {
			return null;
		}
		if (AUTHORIZATION.equals(header)) {
			if (value.length() > BEARER.length() && value.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
				String token = value.substring(BEARER.length()).strip();
				return token.isEmpty() ? null : token;
			}
			// another scheme (Basic ...) is no API key
			return null;
		}
		return value.isBlank() ? null : value.strip();
	}

	/** Whether the header is one of {@code credentialHeaders}, whatever the case of either. */
	public static boolean isCredentialHeader(String header, List<String> credentialHeaders) {
		String name = header.strip().toLowerCase(Locale.ROOT);
		return credentialHeaders.stream().anyMatch(credential -> credential.strip().toLowerCase(Locale.ROOT).equals(name));
	}

}
