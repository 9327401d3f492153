package io.windowlimiter.gateway.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.windowlimiter.gateway.DenyCache;
import io.windowlimiter.gateway.ProblemDetailsFilter;
import io.windowlimiter.gateway.RateLimitHeaders;
import io.windowlimiter.gateway.RateLimitMetrics;
import io.windowlimiter.gateway.DecisionWarmUp;
import io.windowlimiter.gateway.StartupRouteCheck;
import io.windowlimiter.gateway.WindowRateLimiter;
import io.windowlimiter.gateway.algorithm.FixedWindow;
import io.windowlimiter.gateway.algorithm.LimitScript;
import io.windowlimiter.gateway.algorithm.SlidingLog;
import io.windowlimiter.gateway.algorithm.SlidingLogSortedSet;
import io.windowlimiter.gateway.algorithm.SlidingWindowCounter;
import io.windowlimiter.gateway.algorithm.TokenBucket;
import io.windowlimiter.gateway.algorithm.WindowAlgorithm;
import io.windowlimiter.gateway.failure.LocalWindowLimiter;
import io.windowlimiter.gateway.failure.RedisGuard;
import io.windowlimiter.gateway.key.ClientIpKeyResolver;
import io.windowlimiter.gateway.key.HeaderKeyResolver;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.ratelimit.PrincipalNameKeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Wires the window rate limiter: one bean per algorithm, the limiter itself ({@code @Primary}, since
 * the gateway always adds its own {@code redisRateLimiter}), the key resolvers and the start-up check.
 * Runs before the gateway's auto-configuration, whose rate-limiter filter needs a limiter and a
 * key resolver to exist.
 */
@AutoConfiguration(after = DataRedisReactiveAutoConfiguration.class, before = GatewayAutoConfiguration.class)
@ConditionalOnClass({ GatewayAutoConfiguration.class, ReactiveStringRedisTemplate.class })
@ConditionalOnBean(ReactiveStringRedisTemplate.class)
@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".enabled", matchIfMissing = true)
@EnableConfigurationProperties(WindowRateLimiterProperties.class)
public class WindowRateLimiterAutoConfiguration {

	@Bean
	public FixedWindow fixedWindow(ReactiveStringRedisTemplate redis) {
		return new FixedWindow(redis);
	}

	@Bean
	public SlidingLog slidingLog(ReactiveStringRedisTemplate redis) {
		return new SlidingLog(redis);
	}

	@Bean
	public SlidingLogSortedSet slidingLogSortedSet(ReactiveStringRedisTemplate redis) {
		return new SlidingLogSortedSet(redis);
	}

	@Bean
	public SlidingWindowCounter slidingWindowCounter(ReactiveStringRedisTemplate redis) {
		return new SlidingWindowCounter(redis);
	}

	@Bean
	public TokenBucket tokenBucket(ReactiveStringRedisTemplate redis) {
		return new TokenBucket(redis);
	}

	@Bean
	@ConditionalOnMissingBean
	public RedisGuard windowRateLimiterRedisGuard(WindowRateLimiterProperties properties) {
		return new RedisGuard(properties.getRedisTimeout(), properties.getRedisStallTimeout(),
				properties.getFailureLogInterval());
	}

	@Bean
	@ConditionalOnMissingBean
	public LocalWindowLimiter windowRateLimiterLocalLimiter(WindowRateLimiterProperties properties) {
		return new LocalWindowLimiter(properties.getLocalMaxClients());
	}

	@Bean
	@ConditionalOnMissingBean
	public DenyCache windowRateLimiterDenyCache(WindowRateLimiterProperties properties) {
		return new DenyCache(properties.getDenyCacheMaxClients(), System::nanoTime);
	}

	@Bean
	@ConditionalOnMissingBean
	public LimitScript windowRateLimiterScript(ReactiveStringRedisTemplate redis, List<WindowAlgorithm> algorithms) {
		return new LimitScript(redis, algorithms);
	}

	@Bean
	public DecisionWarmUp windowRateLimiterWarmUp(LimitScript script, List<WindowAlgorithm> algorithms,
			RedisGuard guard) {
		return new DecisionWarmUp(script, algorithms, guard, Duration.ofSeconds(10));
	}

	@Bean
	@ConditionalOnMissingBean
	public RateLimitHeaders windowRateLimiterHeaders(WindowRateLimiterProperties properties) {
		WindowRateLimiterProperties.Headers headers = properties.getHeaders();
		return new RateLimitHeaders(new RateLimitHeaders.Names(headers.isXEnabled(), headers.getLimit(),
				headers.getRemaining(), headers.getReset(), headers.isIetfEnabled(), headers.getPolicy(),
				headers.getRateLimit()));
	}

	@Bean
	@ConditionalOnMissingBean
	public RateLimitMetrics windowRateLimiterMetrics(ObjectProvider<MeterRegistry> registry) {
		return new RateLimitMetrics(registry.getIfAvailable());
	}

	@Bean(WindowRateLimiter.BEAN_NAME)
	@Primary
	@ConditionalOnMissingBean(name = WindowRateLimiter.BEAN_NAME)
	public WindowRateLimiter windowRateLimiter(LimitScript script, List<WindowAlgorithm> algorithms,
			RedisGuard guard, DenyCache denyCache, LocalWindowLimiter localLimiter, RateLimitHeaders headers,
			RateLimitMetrics metrics, WindowRateLimiterProperties properties) {
		return new WindowRateLimiter(script, algorithms, guard, denyCache, localLimiter, headers, metrics,
				properties.getProblemDetails().isEnabled(), Clock.systemUTC());
	}

	@Bean
	@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".problem-details.enabled", havingValue = "true")
	public ProblemDetailsFilter windowRateLimiterProblemDetailsFilter() {
		return new ProblemDetailsFilter();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".cluster-topology-refresh", matchIfMissing = true)
	public RedisTopologyCustomizer windowRateLimiterRedisTopologyCustomizer(Environment environment) {
		return new RedisTopologyCustomizer(environment);
	}

	@Bean
	@ConditionalOnMissingBean(name = "headerKeyResolver")
	public HeaderKeyResolver headerKeyResolver(WindowRateLimiterProperties properties) {
		return new HeaderKeyResolver(properties.getKeyHeader());
	}

	@Bean
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

	/** The gateway's default resolver, which it drops once other resolvers exist; kept as the default. */
	@Bean(PrincipalNameKeyResolver.BEAN_NAME)
	@Primary
	@ConditionalOnMissingBean(name = PrincipalNameKeyResolver.BEAN_NAME)
	public PrincipalNameKeyResolver principalNameKeyResolver() {
		return new PrincipalNameKeyResolver();
	}

	@Bean
	public StartupRouteCheck windowRateLimiterStartupRouteCheck(ObjectProvider<GatewayProperties> gatewayProperties) {
		return new StartupRouteCheck(gatewayProperties.getIfAvailable(GatewayProperties::new));
	}

}
