package io.windowlimiter.gateway.autoconfigure;


import io.windowlimiter.gateway.DeletedRoutesListener;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.gateway.ExchangeContextFilter;
import io.windowlimiter.gateway.LimiterFilterExchangeCapture;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterProperties;
import io.windowlimiter.core.key.ClientIpRuleLog;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.gateway.ProblemDetailsFilter;
import io.windowlimiter.gateway.RefusalStatusFilter;
import io.windowlimiter.gateway.StartupRouteCheck;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.filter.WindowRateLimitGatewayFilterFactory;
import io.windowlimiter.gateway.key.ApiKeyResolver;
import io.windowlimiter.gateway.key.ClientIpKeyResolver;
import io.windowlimiter.gateway.key.HeaderKeyResolver;
import io.windowlimiter.gateway.plan.HeaderPlanResolver;
import io.windowlimiter.gateway.plan.PlanResolver;
import io.windowlimiter.gateway.plan.PrincipalPlanResolver;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Wires the window rate limiter into a WebFlux gateway, over the core's beans
 * ({@link WindowRateLimiterCoreAutoConfiguration}): the plan resolver, the limiter itself, the key
 * resolvers, problem details and the start-up check. Adding it changes no route that does not name it: the limiter and the resolvers are
 * reached by name ({@code #{@windowRateLimiter}}), never injected by type, so the gateway's own defaults
 * ({@code redisRateLimiter}, {@code principalNameKeyResolver}) or the user's stay the defaults, unless
 * {@code window-rate-limiter.default-limiter} opts in. Internal beans back off for the user's own.
 */
@AutoConfiguration(after = WindowRateLimiterCoreAutoConfiguration.class, before = GatewayAutoConfiguration.class)
@ConditionalOnClass(GatewayAutoConfiguration.class)
@ConditionalOnBean(RateLimiterCore.class)
public class WindowRateLimiterAutoConfiguration {

	private static final String SPRING_SECURITY = "org.springframework.security.core.Authentication";


	private static final String DEFAULT_LIMITER = WindowRateLimiterProperties.PREFIX + ".default-limiter";

	/**
	 * The built-in plan resolvers, in order: the authenticated principal's claim or authority when Spring
	 * Security is there, then the plan header when one is set.
	 */
	@Bean
	@ConditionalOnMissingBean(PlanResolver.class)
	@Conditional(BuiltInPlanResolvers.class)
	public PlanResolver windowRateLimiterPlanResolver(WindowRateLimiterProperties properties) {
		String planHeader = properties.getPlanHeader();
		if (planHeader != null && !properties.isPlanHeaderTrusted()) {
			// copied from an example, a plan header lets every client name the biggest plan: refuse until
			// someone says who writes it
			throw new IllegalStateException(WindowRateLimiterProperties.PREFIX + ".plan-header is '" + planHeader
					+ "', but any client can send " + planHeader + " and pick its own plan. Remove what clients "
					+ "send before the limiter reads it (RemoveRequestHeader=" + planHeader + " in default-filters, "
					+ "or in the route's filters before RequestRateLimiter) and set it from something you verified, "
					+ "or let a proxy in front of every path to this gateway overwrite it; then state it with "
					+ WindowRateLimiterProperties.PREFIX + ".plan-header-trusted: true. Or read the plan from the "
					+ "authenticated principal instead (plan-claim, plan-authority-prefix, or a PlanResolver bean).");
		}
		PlanResolver header = (planHeader != null) ? new HeaderPlanResolver(planHeader) : null;
		if (!ClassUtils.isPresent(SPRING_SECURITY, getClass().getClassLoader())) {
			return header;
		}
		PlanResolver principal = new PrincipalPlanResolver(properties.getPlanClaim(),
				properties.getPlanAuthorityPrefix());
		return (header != null) ? principal.orElse(header) : principal;
	}

	/** Spring Security on the class path, or a plan header set. */
	static class BuiltInPlanResolvers extends AnyNestedCondition {

		BuiltInPlanResolvers() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnClass(name = SPRING_SECURITY)
		static class SpringSecurity {

		}

		@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".plan-header")
		static class PlanHeader {

		}

	}

	/**
	 * Hands plan resolvers the request as the route's filters before RequestRateLimiter left it (a
	 * RemoveRequestHeader there then counts). Static: a post-processor is made before other beans.
	 */
	@Bean
	public static LimiterFilterExchangeCapture windowRateLimiterExchangeCapture() {
		return new LimiterFilterExchangeCapture();
	}

	/** Hands the request to the limiter (its SPI passes only route and key), for plan resolvers. */
	@Bean
	@ConditionalOnMissingBean
	public ExchangeContextFilter windowRateLimiterExchangeContextFilter() {
		return new ExchangeContextFilter();
	}

	/**
	 * Not a default candidate: the gateway's filter keeps its own {@code redisRateLimiter} (or the user's
	 * limiter) as the default, and routes reach this one by name, {@code #{@windowRateLimiter}}.
	 */
	@Bean(name = WindowRateLimiter.BEAN_NAME, defaultCandidate = false)
	@ConditionalOnMissingBean(name = WindowRateLimiter.BEAN_NAME)
	@ConditionalOnProperty(name = DEFAULT_LIMITER, havingValue = "false", matchIfMissing = true)
	public WindowRateLimiter windowRateLimiter(RateLimiterCore core, ObjectProvider<PlanResolver> planResolver,
			WindowRateLimiterProperties properties) {
		return new WindowRateLimiter(core, planResolver.getIfUnique(), properties.getProblemDetails().isEnabled());
	}

	/**
	 * Opted in with {@code window-rate-limiter.default-limiter: true}: the filter's default for routes that
	 * name no limiter. {@code @Primary}, since the gateway always adds its {@code redisRateLimiter} too.
	 */
	@Bean(WindowRateLimiter.BEAN_NAME)
	@Primary
	@ConditionalOnMissingBean(name = WindowRateLimiter.BEAN_NAME)
	@ConditionalOnProperty(name = DEFAULT_LIMITER, havingValue = "true")
	public WindowRateLimiter windowRateLimiterAsDefault(RateLimiterCore core, ObjectProvider<PlanResolver> planResolver,
			WindowRateLimiterProperties properties) {
		return new WindowRateLimiter(core, planResolver.getIfUnique(), properties.getProblemDetails().isEnabled());
	}

	/** The WindowRateLimit filter, reached by name in routes: adding it changes no route that does not name it. */
	@Bean
	@ConditionalOnMissingBean
	public WindowRateLimitGatewayFilterFactory windowRateLimitGatewayFilterFactory(RateLimiterCore core,
			ObjectProvider<PlanResolver> planResolver, WindowRateLimiterProperties properties) {
		return new WindowRateLimitGatewayFilterFactory(core, planResolver.getIfUnique(),
				properties.getProblemDetails().isEnabled());
	}

	/** Forgets the limits of routes deleted at run time, when the gateway's routes are refreshed. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(name = WindowRateLimiter.BEAN_NAME)
	public DeletedRoutesListener windowRateLimiterDeletedRoutesListener(
			@Qualifier(WindowRateLimiter.BEAN_NAME) WindowRateLimiter limiter) {
		return new DeletedRoutesListener(limiter);
	}

	@Bean
	@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".problem-details.enabled", havingValue = "true")
	public ProblemDetailsFilter windowRateLimiterProblemDetailsFilter() {
		return new ProblemDetailsFilter();
	}

	/** Gives a calendar quota's refusal its route's quota-status (wraps only routes that set one). */
	@Bean
	@ConditionalOnMissingBean
	public RefusalStatusFilter windowRateLimiterRefusalStatusFilter(RateLimiterCore core) {
		return new RefusalStatusFilter(core);
	}

	// Key resolvers are used by name in routes; as default candidates they would displace the gateway's
	// principalNameKeyResolver, or the user's own resolver, as the filter's default.
	@Bean(name = "headerKeyResolver", defaultCandidate = false)
	@ConditionalOnMissingBean(name = "headerKeyResolver")
	public HeaderKeyResolver headerKeyResolver(WindowRateLimiterProperties properties) {
		return new HeaderKeyResolver(properties.getKeyHeader(), properties.keyHeaderIsCredential());
	}

	/** API keys as the official SDKs send them (Authorization: Bearer, x-api-key, api-key), hashed in the core. */
	@Bean(name = "apiKeyResolver", defaultCandidate = false)
	@ConditionalOnMissingBean(name = "apiKeyResolver")
	public ApiKeyResolver apiKeyResolver() {
		return new ApiKeyResolver();
	}

	@Bean(name = "clientIpKeyResolver", defaultCandidate = false)
	@ConditionalOnMissingBean(name = "clientIpKeyResolver")
	public ClientIpKeyResolver clientIpKeyResolver(WindowRateLimiterProperties properties) {
		Integer hops = properties.getTrustedProxyHops();
		if (hops != null && hops > 0 && properties.getTrustedProxies().isEmpty()) {
			// Before trusted-proxies existed, hops alone meant "believe X-Forwarded-For from any peer". Now
			// it would silently key every client by its load balancer's address: refuse instead.
			throw new IllegalStateException(WindowRateLimiterProperties.PREFIX + ".trusted-proxy-hops is " + hops
					+ " but " + WindowRateLimiterProperties.PREFIX + ".trusted-proxies is empty. X-Forwarded-For"
					+ " is read only when the TCP peer is a trusted proxy: list your proxies' addresses or CIDR"
					+ " ranges in " + WindowRateLimiterProperties.PREFIX + ".trusted-proxies (trusted-proxy-hops"
					+ " then only caps how many entries are read, and may be dropped).");
		}
		return new ClientIpKeyResolver(properties.getTrustedProxies(), (hops != null) ? hops : Integer.MAX_VALUE,
				properties.getIpv6PrefixLength());
	}

	/** Says at start-up, where forwarded headers move the requests' remote address, that the resolver keeps the TCP peer. */
	@Bean
	public ClientIpRuleLog windowRateLimiterClientIpRuleLog(Environment environment,
			WindowRateLimiterProperties properties, ListableBeanFactory beans) {
		return new ClientIpRuleLog(environment, properties.getTrustedProxies(),
				() -> beans.isTypeMatch("clientIpKeyResolver", ClientIpKeyResolver.class));
	}

	@Bean
	public StartupRouteCheck windowRateLimiterStartupRouteCheck(ObjectProvider<GatewayProperties> gatewayProperties,
			PolicyRegistry registry, WindowRateLimiterProperties properties, ListableBeanFactory beans) {
		return new StartupRouteCheck(gatewayProperties.getIfAvailable(GatewayProperties::new), registry,
				properties.isDefaultLimiter(), beans);
	}

}
