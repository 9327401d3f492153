package io.windowlimiter.gateway.key;

import io.windowlimiter.core.key.ConflictingCredentialsException;
import io.windowlimiter.core.key.CredentialKeys;
import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ApiKeyResolverUnitTests {

	private final ApiKeyResolver resolver = new ApiKeyResolver();

	private String key(String... headers) {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/v1/chat/completions");
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return this.resolver.resolve(MockServerWebExchange.from(request)).block();
	}

	@Test
	void theBearerTokenIsTheKeyWithoutItsScheme() {
		// what the OpenAI SDKs send
		assertThat(key("Authorization", "Bearer sk-proj-abc")).isEqualTo("sk-proj-abc");
		assertThat(key("authorization", "bearer   sk-proj-abc  ")).as("any case, spaces around").isEqualTo("sk-proj-abc");
	}

	@Test
	void theKeyIsABearerTokenOrXApiKeyOrApiKey() {
		assertThat(key("Authorization", "Bearer from-bearer")).isEqualTo("from-bearer");
		// what the Anthropic SDKs send
		assertThat(key("x-api-key", "sk-ant-abc")).isEqualTo("sk-ant-abc");
		assertThat(key("X-Api-Key", "sk-ant-abc")).as("any case").isEqualTo("sk-ant-abc");
		// what the Azure OpenAI SDKs send
		assertThat(key("api-key", "azure-abc")).isEqualTo("azure-abc");
		// one key in several headers is one credential
		assertThat(key("Authorization", "Bearer sk-1", "x-api-key", "sk-1", "api-key", " sk-1 ")).isEqualTo("sk-1");
	}

	/**
	 * The gateway would count the request under one key while the upstream authenticates it by another (Anthropic
	 * reads x-api-key): a random Bearer beside the real key would be a fresh budget on every call.
	 */
	@Test
	void differentKeysInItsHeadersAreAnErrorNamingThem() {
		assertThatThrownBy(() -> key("Authorization", "Bearer rnd-1", "x-api-key", "sk-real"))
			.isInstanceOfSatisfying(ConflictingCredentialsException.class,
					conflict -> assertThat(conflict.headers()).containsExactly("Authorization", "x-api-key"));
		assertThatThrownBy(() -> key("x-api-key", "sk-ant-abc", "api-key", "from-azure"))
			.isInstanceOfSatisfying(ConflictingCredentialsException.class,
					conflict -> assertThat(conflict.problem()).contains("\"status\":400", "\"header\":\"x-api-key, api-key\""));
		assertThatThrownBy(() -> key("x-api-key", "sk-a", "x-api-key", "sk-b")).as("one header twice")
			.isInstanceOf(ConflictingCredentialsException.class);
	}

	@Test
	void anAuthorizationOfAnotherSchemeOrAnEmptyTokenIsNoKey() {
		assertThat(key("Authorization", "Basic dXNlcjpwYXNz")).isNull();
		assertThat(key("Authorization", "Basic dXNlcjpwYXNz", "x-api-key", "sk-ant-abc")).isEqualTo("sk-ant-abc");
		assertThat(key("Authorization", "Bearer ")).isNull();
		assertThat(key("Authorization", "Bearer", "api-key", "azure-abc")).isEqualTo("azure-abc");
		assertThat(key("x-api-key", " ")).isNull();
		assertThat(key()).isNull();
	}

	@Test
	void itsKeysAreCredentials() {
		assertThat(CredentialKeys.readBy(this.resolver)).isTrue();
		assertThat(CredentialKeys.readBy(new HeaderKeyResolver("Authorization"))).isTrue();
		assertThat(CredentialKeys.readBy(new HeaderKeyResolver("x-api-key"))).as("any case").isTrue();
		assertThat(CredentialKeys.readBy(new HeaderKeyResolver("X-Tenant"))).isFalse();
		assertThat(CredentialKeys.readBy(new HeaderKeyResolver("X-Tenant", true))).isTrue();
		assertThat(CredentialKeys.readBy(new ClientIpKeyResolver(java.util.List.of(), 1, 64))).isFalse();
	}

}
