package io.windowlimiter.gateway.key;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

class HeaderKeyResolverUnitTests {

	private final HeaderKeyResolver resolver = new HeaderKeyResolver("X-API-Key");

	@Test
	void usesTheHeaderValue() {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.get("/").header("X-API-Key", "alice"));
		assertThat(this.resolver.resolve(exchange).block()).isEqualTo("alice");
	}

	@Test
	void aMissingOrBlankHeaderGivesNoKey() {
		assertThat(this.resolver.resolve(MockServerWebExchange.from(MockServerHttpRequest.get("/"))).blockOptional())
			.isEmpty();
		MockServerWebExchange blank = MockServerWebExchange
			.from(MockServerHttpRequest.get("/").header("X-API-Key", "  "));
		assertThat(this.resolver.resolve(blank).blockOptional()).isEmpty();
	}

}
