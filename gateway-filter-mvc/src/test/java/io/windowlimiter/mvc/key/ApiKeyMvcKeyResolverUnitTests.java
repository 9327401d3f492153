package io.windowlimiter.mvc.key;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.servlet.function.ServerRequest;

import static org.assertj.core.api.Assertions.assertThat;

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
	void aBearerTokenComesFirstThenXApiKeyThenApiKeyAsOnWebFlux() {
		assertThat(key("Authorization", "Bearer sk-proj-abc", "x-api-key", "from-x")).isEqualTo("sk-proj-abc");
		assertThat(key("Authorization", "Basic dXNlcjpwYXNz", "x-api-key", "sk-ant-abc")).isEqualTo("sk-ant-abc");
		assertThat(key("api-key", "azure-abc")).isEqualTo("azure-abc");
		assertThat(key()).isNull();
		assertThat(this.resolver.keysAreCredentials()).isTrue();
		assertThat(new HeaderMvcKeyResolver("Cookie").keysAreCredentials()).isTrue();
		assertThat(new HeaderMvcKeyResolver("X-Tenant").keysAreCredentials()).isFalse();
	}

}
