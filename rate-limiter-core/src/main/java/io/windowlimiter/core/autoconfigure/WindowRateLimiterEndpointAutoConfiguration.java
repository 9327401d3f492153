package io.windowlimiter.core.autoconfigure;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.core.operations.ChangeBroadcast;
import io.windowlimiter.core.operations.DeniedClients;
import io.windowlimiter.core.operations.RateLimitOperations;
import io.windowlimiter.core.operations.RateLimitsEndpoint;
import io.windowlimiter.core.plan.PlanAssignments;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.audit.AuditEventRepository;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * The {@code ratelimits} actuator endpoint, where actuator is on the classpath and the endpoint is
 * available (enabled and exposed, {@code management.endpoints.web.exposure.include}). The clients refused
 * most are tracked only then: nobody could read them otherwise.
 */
@AutoConfiguration(after = WindowRateLimiterCoreAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(RateLimiterCore.class)
@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
public class WindowRateLimiterEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	public DeniedClients windowRateLimiterDeniedClients(RateLimiterCore core) {
		DeniedClients deniedClients = DeniedClients.ofDefaults();
		core.setDenialListener(deniedClients);
		return deniedClients;
	}

	@Bean
	@ConditionalOnMissingBean
	public RateLimitOperations windowRateLimiterOperations(RateLimiterCore core, ReactiveStringRedisTemplate redis,
			ChangeBroadcast broadcast, DeniedClients deniedClients, ObjectProvider<PlanAssignments> assignments,
			ApplicationEventPublisher events, ObjectProvider<AuditEventRepository> auditEvents,
			ObjectProvider<WindowRateLimiterProperties> properties) {
		// audit events go nowhere without a repository: Boot's AuditListener exists only beside one
		return new RateLimitOperations(core, redis, broadcast, deniedClients, assignments.getIfUnique(),
				(auditEvents.getIfAvailable() != null) ? events : null,
				properties.getIfAvailable(WindowRateLimiterProperties::new).getRedisTimeout());
	}

	@Bean
	@ConditionalOnMissingBean
	public RateLimitsEndpoint rateLimitsEndpoint(RateLimitOperations operations) {
		return new RateLimitsEndpoint(operations);
	}

}
