package io.windowlimiter.gateway.plan;

import java.security.Principal;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.oauth2.core.ClaimAccessor;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * The plan of an authenticated principal (Spring Security): a claim of its token, such as a JWT's
 * {@code plan} claim, when {@code claim} is set and the principal carries claims; else its first
 * authority that starts with {@code authorityPrefix} ({@code PLAN_pro} is plan {@code pro}). Both are
 * written by the authentication, never by the client. A request without an authenticated principal
 * has no plan from here.
 */
public class PrincipalPlanResolver implements PlanResolver {

	/** Spring Security's OAuth2 types are optional: claims are read only when they are there. */
	private static final boolean CLAIMS_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.oauth2.core.ClaimAccessor", PrincipalPlanResolver.class.getClassLoader());

	private final @Nullable String claim;

	private final String authorityPrefix;

	public PrincipalPlanResolver(@Nullable String claim, String authorityPrefix) {
		if (authorityPrefix == null || authorityPrefix.isEmpty()) {
			throw new IllegalArgumentException("The plan authority prefix must not be empty: every authority would "
					+ "name a plan");
		}
		this.claim = claim;
		this.authorityPrefix = authorityPrefix;
	}

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		return exchange.getPrincipal().flatMap(principal -> Mono.justOrEmpty(planOf(principal)));
	}

	private @Nullable String planOf(Principal principal) {
		if (!(principal instanceof Authentication authentication) || !authentication.isAuthenticated()) {
			return null;
		}
		if (this.claim != null && CLAIMS_PRESENT) {
			String claimed = Claims.of(authentication.getPrincipal(), this.claim);
			if (claimed != null && !claimed.isBlank()) {
				return claimed;
			}
		}
		for (GrantedAuthority authority : authentication.getAuthorities()) {
			String name = authority.getAuthority();
			if (name != null && name.length() > this.authorityPrefix.length() && name.startsWith(this.authorityPrefix)) {
				return name.substring(this.authorityPrefix.length());
			}
		}
		return null;
	}

	/** Kept apart so that {@link ClaimAccessor} is loaded only when it is on the class path. */
	private static final class Claims {

		static @Nullable String of(Object principal, String claim) {
			return (principal instanceof ClaimAccessor claims) ? claims.getClaimAsString(claim) : null;
		}

	}

}
