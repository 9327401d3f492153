package io.windowlimiter.mvc.autoconfigure;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterCoreAutoConfiguration;
import io.windowlimiter.core.autoconfigure.WindowRateLimiterProperties;
import io.windowlimiter.core.key.ClientIpKeys;
import io.windowlimiter.core.key.ClientIpRuleLog;
import io.windowlimiter.mvc.MvcFinalSettles;
import io.windowlimiter.mvc.MvcRateLimiter;
import io.windowlimiter.mvc.MvcRouteCheck;
import io.windowlimiter.mvc.MvcRoutesRefresh;
import io.windowlimiter.mvc.WindowRateLimitFilterFunctions;
import io.windowlimiter.mvc.key.ApiKeyMvcKeyResolver;
import io.windowlimiter.mvc.key.ClientIpMvcKeyResolver;
import io.windowlimiter.mvc.key.HeaderMvcKeyResolver;
import io.windowlimiter.mvc.key.PrincipalMvcKeyResolver;
import io.windowlimiter.mvc.key.TcpPeerValve;
import io.windowlimiter.mvc.plan.HeaderMvcPlanResolver;
import io.windowlimiter.mvc.plan.MvcPlanResolver;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.gateway.server.mvc.filter.FilterSupplier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Wires the window rate limiter into a Server MVC gateway, over the core's beans
 * ({@link WindowRateLimiterCoreAutoConfiguration}): the {@code WindowRateLimit} filter, its start-up check,
 * the key resolvers routes name ({@code headerKeyResolver}, {@code apiKeyResolver}, {@code clientIpKeyResolver},
 * {@code principalKeyResolver}) and the plan header's resolver. Internal beans back off for the user's own.
 */
@AutoConfiguration(after = WindowRateLimiterCoreAutoConfiguration.class)
@ConditionalOnClass(FilterSupplier.class)
@ConditionalOnBean(RateLimiterCore.class)
public class WindowRateLimiterMvcAutoConfiguration {

	/** Checks and configures the routes in properties; made before Server MVC builds them (see the supplier). */
	@Bean
	public MvcRouteCheck windowRateLimiterMvcRouteCheck(Environment environment, RateLimiterCore core,
			ListableBeanFactory beans) {
		return new MvcRouteCheck(environment, core, beans);
	}

	/** Server MVC reads its filters from the suppliers as it builds routes: the check has run by then. */
	@Bean
	public WindowRateLimitFilterFunctions.FilterSupplier windowRateLimitFilterSupplier(MvcRouteCheck routeCheck) {
		return new WindowRateLimitFilterFunctions.FilterSupplier();
	}

	/** Routes in properties refreshed at run time: their new limits, and the removed ones forgotten. */
	@Bean
	@ConditionalOnClass(name = "org.springframework.cloud.context.scope.refresh.RefreshScopeRefreshedEvent")
	public MvcRoutesRefresh windowRateLimiterMvcRoutesRefresh(Environment environment, RateLimiterCore core,
			ListableBeanFactory beans, MvcRateLimiter limiter) {
		return new MvcRoutesRefresh(environment, core, beans, limiter);
	}

	/**
	 * Settles, as a request's handling ends, what no written response settled: a request a Retry filter gave up on,
	 * a call the proxy failed. The server maps it to every request, as any Filter bean.
	 */
	@Bean
	public MvcFinalSettles windowRateLimiterMvcFinalSettles() {
		return new MvcFinalSettles();
	}

	@Bean
	@ConditionalOnMissingBean
	public MvcRateLimiter windowRateLimiterMvc(RateLimiterCore core, ObjectProvider<MvcPlanResolver> planResolver,
			ListableBeanFactory beans, WindowRateLimiterProperties properties) {
		return new MvcRateLimiter(core, planResolver.getIfUnique(), beans, properties.getRedisTimeout(),
				properties.getProblemDetails().isEnabled());
	}

	@Bean
	@ConditionalOnMissingBean(MvcPlanResolver.class)
	@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".plan-header")
	public MvcPlanResolver windowRateLimiterMvcPlanResolver(WindowRateLimiterProperties properties) {
		String planHeader = properties.getPlanHeader();
		if (!properties.isPlanHeaderTrusted()) {
			// copied from an example, a plan header lets every client name the biggest plan
			throw new IllegalStateException(WindowRateLimiterProperties.PREFIX + ".plan-header is '" + planHeader
					+ "', but any client can send " + planHeader + " and pick its own plan. Remove what clients send "
					+ "before the limiter reads it (a RemoveRequestHeader filter before WindowRateLimit) and set it "
					+ "from something you verified, or let a proxy in front of every path to this gateway overwrite "
					+ "it; then state it with " + WindowRateLimiterProperties.PREFIX + ".plan-header-trusted: true. "
					+ "Or define a MvcPlanResolver bean that reads the authenticated principal.");
		}
		return new HeaderMvcPlanResolver(planHeader);
	}

	@Bean(name = "headerKeyResolver")
	@ConditionalOnMissingBean(name = "headerKeyResolver")
	public HeaderMvcKeyResolver headerKeyResolver(WindowRateLimiterProperties properties) {
		return new HeaderMvcKeyResolver(properties.getKeyHeader(), properties.keyHeaderIsCredential());
	}

	/** API keys as the official SDKs send them (Authorization: Bearer, x-api-key, api-key), hashed in the core. */
	@Bean(name = "apiKeyResolver")
	@ConditionalOnMissingBean(name = "apiKeyResolver")
	public ApiKeyMvcKeyResolver apiKeyResolver() {
		return new ApiKeyMvcKeyResolver();
	}

	@Bean(name = "clientIpKeyResolver")
	@ConditionalOnMissingBean(name = "clientIpKeyResolver")
	public ClientIpMvcKeyResolver clientIpKeyResolver(WindowRateLimiterProperties properties) {
		Integer hops = properties.getTrustedProxyHops();
		if (hops != null && hops > 0 && properties.getTrustedProxies().isEmpty()) {
			throw new IllegalStateException(WindowRateLimiterProperties.PREFIX + ".trusted-proxy-hops is " + hops
					+ " but " + WindowRateLimiterProperties.PREFIX + ".trusted-proxies is empty. X-Forwarded-For"
					+ " is read only when the TCP peer is a trusted proxy: list your proxies' addresses or CIDR"
					+ " ranges in " + WindowRateLimiterProperties.PREFIX + ".trusted-proxies.");
		}
		return new ClientIpMvcKeyResolver(new ClientIpKeys(properties.getTrustedProxies(),
				(hops != null) ? hops : Integer.MAX_VALUE, properties.getIpv6PrefixLength()));
	}

	/** Says at start-up, where forwarded headers move the requests' remote address, that the resolver keeps the TCP peer. */
	@Bean
	public ClientIpRuleLog windowRateLimiterClientIpRuleLog(Environment environment,
			WindowRateLimiterProperties properties, ListableBeanFactory beans) {
		return new ClientIpRuleLog(environment, properties.getTrustedProxies(),
				() -> beans.isTypeMatch("clientIpKeyResolver", ClientIpMvcKeyResolver.class));
	}

	/**
	 * On Tomcat, a valve that hands {@code clientIpKeyResolver} the TCP peer and X-Forwarded-For as sent, which
	 * Tomcat's RemoteIpValve changes when forwarded headers are on. Every other part of the server stays as
	 * configured.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.apache.catalina.valves.ValveBase",
			"org.springframework.boot.tomcat.ConfigurableTomcatWebServerFactory" })
	static class TomcatPeer {

		@Bean
		TcpPeerValve.Customizer windowRateLimiterTcpPeerValve() {
			return new TcpPeerValve.Customizer();
		}

	}

	@Bean(name = "principalKeyResolver")
	@ConditionalOnMissingBean(name = "principalKeyResolver")
	public PrincipalMvcKeyResolver principalKeyResolver() {
		return new PrincipalMvcKeyResolver();
	}

}
