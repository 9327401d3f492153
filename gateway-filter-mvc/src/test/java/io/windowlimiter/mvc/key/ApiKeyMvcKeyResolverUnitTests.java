package io.windowlimiter.mvc.key;

import java.util.List;

import io.windowlimiter.core.key.ConflictingCredentialsException;
import org.junit.jupiter.api.Test;

import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.servlet.function.ServerRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ApiKeyMvcKeyResolverUnitTests {

	private static final List<HttpMessageConverter<?>> NO_CONVERTERS = List.of();

	private final ApiKeyMvcKeyResolver resolver = new ApiKeyMvcKeyResolver();

	private String key(String... headers) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/messages");
		for (int i = 0; i < headers.length; i += 2) {
			request.addHeader(headers[i], headers[i + 1]);
		}
		return this.resolver.resolve(ServerRequest.create(request, NO_CONVERTERS));
	}

	@Test
	void theKeyIsABearerTokenOrXApiKeyOrApiKeyAsOnWebFlux() {
		assertThat(key("Authorization", "Bearer sk-proj-abc", "x-api-key", "sk-proj-abc")).isEqualTo("sk-proj-abc");
		assertThat(key("Authorization", "Basic dXNlcjpwYXNz", "x-api-key", "sk-ant-abc")).isEqualTo("sk-ant-abc");
		assertThat(key("api-key", "azure-abc")).isEqualTo("azure-abc");
		assertThat(key()).isNull();
		assertThat(this.resolver.keysAreCredentials()).isTrue();
		assertThat(new HeaderMvcKeyResolver("Cookie").keysAreCredentials()).isTrue();
		assertThat(new HeaderMvcKeyResolver("X-Tenant").keysAreCredentials()).isFalse();
	}

	@Test
	void differentKeysInItsHeadersAreRefusedNamingThem() {
		assertThatThrownBy(() -> key("Authorization", "Bearer rnd-1", "x-api-key", "sk-real"))
			.isInstanceOfSatisfying(ConflictingCredentialsException.class,
					conflict -> assertThat(conflict.headers()).containsExactly("Authorization", "x-api-key"));
		assertThatThrownBy(() -> key("x-api-key", "sk-a", "x-api-key", "sk-b")).as("one header twice")
			.isInstanceOfSatisfying(ConflictingCredentialsException.class,
					conflict -> assertThat(conflict.headers()).containsExactly("x-api-key"));
	}

}
