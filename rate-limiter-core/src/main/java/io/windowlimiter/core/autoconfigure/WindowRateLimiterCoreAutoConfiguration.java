package io.windowlimiter.core.autoconfigure;

import java.time.Clock;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.windowlimiter.core.BufferedBodies;
import io.windowlimiter.core.DecisionWarmUp;
import io.micrometer.core.instrument.Gauge;
import io.windowlimiter.core.DenyCache;
import io.windowlimiter.core.HeldRequests;
import io.windowlimiter.core.LeasesAtShutdown;
import io.windowlimiter.core.NearLimit;
import io.windowlimiter.core.access.ClientAccess;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.RateLimitMetrics;
import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.ScriptObservationFilter;
import io.windowlimiter.core.failure.LocalWindowLimiter;
import io.windowlimiter.core.failure.RedisGuard;
import io.windowlimiter.core.failure.SentinelFailoverFollower;
import io.windowlimiter.core.key.ClientKeyHash;
import io.windowlimiter.core.operations.ChangeBroadcast;
import io.windowlimiter.core.plan.PlanAssignments;
import io.windowlimiter.core.plan.RequestPlans;
import io.windowlimiter.core.policy.PolicyRegistry;
import io.windowlimiter.metering.LlmPrices;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * What every gateway adapter decides with (WebFlux and Server MVC alike): the script of every algorithm,
 * the policy registry (routes, plans, scopes), plan assignments, the Redis guard, the deny cache, headers,
 * metrics and the {@link RateLimiterCore} itself, under {@code window-rate-limiter.*}. The adapters'
 * auto-configurations add what reads their requests and writes their responses. Internal beans back off
 * for the user's own.
 */
@AutoConfiguration(after = DataRedisReactiveAutoConfiguration.class)
@ConditionalOnClass(ReactiveStringRedisTemplate.class)
@ConditionalOnBean(ReactiveStringRedisTemplate.class)
@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".enabled", matchIfMissing = true)
@EnableConfigurationProperties(WindowRateLimiterProperties.class)
public class WindowRateLimiterCoreAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	public RedisGuard windowRateLimiterRedisGuard(WindowRateLimiterProperties properties) {
		return new RedisGuard(properties.getRedisTimeout(), properties.getRedisStallTimeout(),
				properties.getFailureLogInterval(), properties.getRedisMaxInFlight());
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
	public LimitScript windowRateLimiterScript(ReactiveStringRedisTemplate redis) {
		return new LimitScript(redis);
	}

	/** On a Sentinel set-up: decisions follow a failover when it is announced, not when the old primary is demoted. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = "spring.data.redis.sentinel.master")
	public SentinelFailoverFollower windowRateLimiterSentinelFollower(LimitScript script, ReactiveStringRedisTemplate redis) {
		if (!(redis.getConnectionFactory() instanceof LettuceConnectionFactory factory)
				|| factory.getSentinelConfiguration() == null) {
			throw new IllegalStateException("spring.data.redis.sentinel.master is set but the Redis connection factory "
					+ redis.getConnectionFactory() + " has no Sentinel configuration");
		}
		return new SentinelFailoverFollower(script, factory.getSentinelConfiguration());
	}

	@Bean
	public DecisionWarmUp windowRateLimiterWarmUp(LimitScript script, ReactiveStringRedisTemplate redis) {
		return new DecisionWarmUp(script, Duration.ofSeconds(10), DecisionWarmUp.addresses(redis.getConnectionFactory()));
	}

	/** Gives hot clients' leased parts back to Redis at shutdown. */
	@Bean
	public LeasesAtShutdown windowRateLimiterLeasesAtShutdown(RateLimiterCore core, LimitScript script,
			WindowRateLimiterProperties properties) {
		return new LeasesAtShutdown(core, script, properties.getRedisTimeout());
	}

	/** Checks the plans now, so a bad one stops start-up; compiles routes with them as they are built. */
	@Bean
	@ConditionalOnMissingBean
	public PolicyRegistry windowRateLimiterPolicyRegistry(WindowRateLimiterProperties properties) {
		LlmPrices prices = properties.prices();
		if (!prices.isEmpty()) {
			// the table as bound: a pattern written without brackets shows here without its *
			LogFactory.getLog(LlmPrices.class).info("LLM prices, USD per million tokens: " + prices.describe());
		}
		return new PolicyRegistry(properties.planArguments(), prices);
	}

	@Bean
	@ConditionalOnMissingBean
	public PlanAssignments windowRateLimiterPlanAssignments(ReactiveStringRedisTemplate redis, PolicyRegistry registry,
			WindowRateLimiterProperties properties) {
		AssignmentProperties assignments = properties.getAssignments();
		return new PlanAssignments(redis, registry.plans(), assignments.getRefreshInterval(),
				assignments.getMaxEntries(), properties.getFailureLogInterval(), System::currentTimeMillis);
	}

	@Bean
	@ConditionalOnMissingBean
	public RateLimitHeaders windowRateLimiterHeaders(WindowRateLimiterProperties properties) {
		HeaderProperties headers = properties.getHeaders();
		return new RateLimitHeaders(new RateLimitHeaders.Names(headers.isXEnabled(), headers.getLimit(),
				headers.getRemaining(), headers.getReset(), headers.isIetfEnabled(), headers.getPolicy(),
				headers.getRateLimit()));
	}

	@Bean
	@ConditionalOnMissingBean
	public RateLimitMetrics windowRateLimiterMetrics(ObjectProvider<MeterRegistry> registry) {
		return new RateLimitMetrics(registry.getIfAvailable());
	}

	/**
	 * Decides for every adapter: the WebFlux RateLimiter SPI and filter, the Server MVC filter. Requests
	 * name their plan only where an adapter's plan resolver ({@link RequestPlans}) is a bean.
	 */
	@Bean
	@ConditionalOnMissingBean
	public RateLimiterCore windowRateLimiterCore(LimitScript script, PolicyRegistry registry,
			PlanAssignments assignments, ObjectProvider<RequestPlans> planResolver, RedisGuard guard,
			DenyCache denyCache, LocalWindowLimiter localLimiter, RateLimitHeaders headers, RateLimitMetrics metrics,
			WindowRateLimiterProperties properties, ClientAccess access, NearLimit nearLimit,
			ObjectProvider<MeterRegistry> meterRegistry) {
		RateLimiterCore core = new RateLimiterCore(script, registry, assignments, planResolver.getIfUnique() != null,
				guard, denyCache, localLimiter, headers, metrics, properties.getFailureLogInterval(), Clock.systemUTC());
		core.setClientKeyHash(clientKeyHash(properties.getClientKeySecret()));
		core.setClientAccess(access);
		core.setNearLimit(nearLimit);
		HeldRequests held = new HeldRequests(properties.getMaxDelayed());
		core.setHeldRequests(held);
		BufferedBodies bodies = new BufferedBodies(properties.getLlm().maxBufferedBytes());
		core.setBufferedBodies(bodies);
		// how close this instance is to window-rate-limiter.llm.max-buffered-bytes
		meterRegistry.ifAvailable(meters -> {
			Gauge.builder(BufferedBodies.GAUGE, bodies, BufferedBodies::buffered)
				.description("Request-body bytes of LLM calls buffered before admission now, all routes together")
				.baseUnit("bytes")
				.register(meters);
			Gauge.builder(BufferedBodies.MAX_GAUGE, bodies, BufferedBodies::max)
				.description("The most request-body bytes of LLM calls buffered at once (llm.max-buffered-bytes)")
				.baseUnit("bytes")
				.register(meters);
		});
		// how close this instance is to window-rate-limiter.max-delayed
		meterRegistry.ifAvailable(meters -> Gauge.builder(HeldRequests.GAUGE, held, HeldRequests::held)
			.description("Requests of routes with a max-delay held (or waiting for Redis with leave to be held) now")
			.register(meters));
		return core;
	}

	private static ClientKeyHash clientKeyHash(@Nullable String secret) {
		try {
			return new ClientKeyHash(secret);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(WindowRateLimiterProperties.PREFIX + ".client-key-secret " + ex.getMessage()
					+ "; it must be a random secret of " + ClientKeyHash.MIN_SECRET_LENGTH + " characters or more "
					+ "(openssl rand -base64 32), the same on every instance, or unset");
		}
	}

	/** The gateway's allow and deny lists, checked now so a bad entry stops start-up, and operators' rules. */
	@Bean
	@ConditionalOnMissingBean
	public ClientAccess windowRateLimiterClientAccess(WindowRateLimiterProperties properties,
			ObjectProvider<PlanAssignments> assignments) {
		return new ClientAccess(properties.gatewayLists(), assignments.getIfUnique());
	}

	@Bean
	@ConditionalOnMissingBean
	public NearLimit windowRateLimiterNearLimit(WindowRateLimiterProperties properties, RateLimitMetrics metrics) {
		NearLimitProperties nearLimit = properties.getNearLimit();
		double share;
		try {
			share = NearLimit.checkShare(WindowRateLimiterProperties.PREFIX + ".near-limit.share", nearLimit.getShare());
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(ex.getMessage(), ex);
		}
		return new NearLimit(share, metrics, nearLimit.getLogInterval());
	}

	/**
	 * On every instance, with or without the operator endpoint: a reset made through any instance must
	 * reach the deny caches of all.
	 */
	@Bean
	@ConditionalOnMissingBean
	public ChangeBroadcast windowRateLimiterChangeBroadcast(ReactiveStringRedisTemplate redis, RateLimiterCore core,
			ObjectProvider<PlanAssignments> assignments, WindowRateLimiterProperties properties) {
		return new ChangeBroadcast(redis, core, assignments.getIfUnique(), properties.getRedisTimeout());
	}

	/** Lettuce's command observations without the limiter's scripts (see {@link ScriptObservationFilter}). */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnClass(name = { "io.micrometer.observation.ObservationPredicate",
			"io.lettuce.core.tracing.LettuceObservationContext" })
	@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".observe-scripts", havingValue = "false",
			matchIfMissing = true)
	public ScriptObservationFilter windowRateLimiterScriptObservationFilter() {
		return new ScriptObservationFilter();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = WindowRateLimiterProperties.PREFIX + ".cluster-topology-refresh", matchIfMissing = true)
	public RedisTopologyCustomizer windowRateLimiterRedisTopologyCustomizer(Environment environment) {
		return new RedisTopologyCustomizer(environment);
	}

}
