package io.windowlimiter.gateway.plan;

import java.security.Principal;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.oauth2.core.ClaimAccessor;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

class PrincipalPlanResolverUnitTests {

	private final PrincipalPlanResolver resolver = new PrincipalPlanResolver("plan", "PLAN_");

	/** A token's claims, as a JWT or an OIDC user carries them. */
	record Token(Map<String, Object> getClaims) implements ClaimAccessor {
	}

	private static ServerWebExchange request(Principal principal, String planHeader) {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/orders");
		if (planHeader != null) {
			request.header("X-Plan", planHeader);
		}
		ServerWebExchange exchange = MockServerWebExchange.from(request);
		return (principal != null) ? exchange.mutate().principal(Mono.just(principal)).build() : exchange;
	}

	private static UsernamePasswordAuthenticationToken user(Object principal, String... authorities) {
		return UsernamePasswordAuthenticationToken.authenticated(principal, null,
				List.of(authorities).stream().map(SimpleGrantedAuthority::new).toList());
	}

	@Test
	void anAuthorityWithThePrefixNamesThePlan() {
		assertThat(this.resolver.resolve(request(user("alice", "ROLE_USER", "PLAN_pro"), null)).block()).isEqualTo("pro");
	}

	@Test
	void theClaimComesBeforeAuthorities() {
		Token token = new Token(Map.of("plan", "enterprise", "sub", "alice"));
		assertThat(this.resolver.resolve(request(user(token, "PLAN_pro"), null)).block()).isEqualTo("enterprise");
	}

	@Test
	void noPlanWithoutAnAuthenticatedPrincipal() {
		TestingAuthenticationToken unauthenticated = new TestingAuthenticationToken("mallory", null, "PLAN_pro");
		unauthenticated.setAuthenticated(false);
		assertThat(this.resolver.resolve(request(unauthenticated, null)).block()).isNull();
		assertThat(this.resolver.resolve(request(null, null)).block()).isNull();
		assertThat(this.resolver.resolve(request(user("bob", "ROLE_USER", "PLAN_"), null)).block())
			.as("a bare prefix names no plan")
			.isNull();
	}

	@Test
	void theHeaderAnswersWhenThePrincipalNamesNoPlan() {
		PlanResolver chain = this.resolver.orElse(new HeaderPlanResolver("X-Plan"));
		assertThat(chain.resolve(request(user("bob", "ROLE_USER"), "pro")).block()).isEqualTo("pro");
		assertThat(chain.resolve(request(user("carol", "PLAN_free"), "pro")).block()).as("the principal first")
			.isEqualTo("free");
	}

}
