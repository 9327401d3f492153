package io.windowlimiter.core.key;

import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Says once at start-up, where the server or the framework makes each request's remote address follow
 * forwarded headers, that the limiter's client-IP resolver does not: it keys by the TCP peer and reads
 * X-Forwarded-For only from {@code window-rate-limiter.trusted-proxies}. Spring Boot turns that handling on
 * by itself on Kubernetes and other detected platforms while {@code server.forward-headers-strategy} is
 * unset; the user may have turned it on for the rest of the gateway (access logs, the RemoteAddr predicate),
 * and it stays as they set it. The line tells an operator which rule decides who shares a quota.
 */
public final class ClientIpRuleLog implements SmartInitializingSingleton {

	static final String STRATEGY = "server.forward-headers-strategy";

	/** The WebFlux gateway's own switch for Reactor Netty's forwarded handling (with its trusted-proxies). */
	static final String GATEWAY_CUSTOMIZER = "spring.cloud.gateway.server.webflux.httpserver.customizer-enabled";

	static final String GATEWAY_TRUSTED_PROXIES = "spring.cloud.gateway.server.webflux.trusted-proxies";

	private static final Log logger = LogFactory.getLog(ClientIpRuleLog.class);

	private final Environment environment;

	private final List<IpRange> trustedProxies;

	private final BooleanSupplier resolverInUse;

	/**
	 * @param trustedProxies the limiter's {@code window-rate-limiter.trusted-proxies}
	 * @param resolverInUse whether the {@code clientIpKeyResolver} bean is the library's (not one of the user's),
	 * asked once all beans are made
	 */
	public ClientIpRuleLog(Environment environment, List<IpRange> trustedProxies, BooleanSupplier resolverInUse) {
		this.environment = environment;
		this.trustedProxies = List.copyOf(trustedProxies);
		this.resolverInUse = resolverInUse;
	}

	@Override
	public void afterSingletonsInstantiated() {
		String handling = forwardedHandling(this.environment);
		if (handling != null && this.resolverInUse.getAsBoolean()) {
			logger.info(message(handling, this.trustedProxies));
		}
	}

	/** What makes the requests' remote address follow forwarded headers, for the log; null when nothing does. */
	static @Nullable String forwardedHandling(Environment environment) {
		Binder binder = Binder.get(environment);
		String strategy = binder.bind(STRATEGY, String.class).map(text -> text.strip().toLowerCase(Locale.ROOT))
			.orElse(null);
		if ("native".equals(strategy)) {
			return STRATEGY + " is native: the server takes each request's remote address from its forwarded "
					+ "headers (X-Forwarded-For)";
		}
		if ("framework".equals(strategy)) {
			return STRATEGY + " is framework: Spring's forwarded-header filter takes each request's remote address "
					+ "from its forwarded headers (X-Forwarded-For)";
		}
		if (strategy == null) {
			CloudPlatform platform = CloudPlatform.getActive(environment);
			if (platform != null && platform.isUsingForwardHeaders()) {
				return "Spring Boot detected cloud platform " + platform + " and, with " + STRATEGY + " unset, turned "
						+ "the server's forwarded-header handling on: the server takes each request's remote address "
						+ "from its X-Forwarded-For";
			}
		}
		boolean customizer = binder.bind(GATEWAY_CUSTOMIZER, Boolean.class).orElse(false);
		String gatewayProxies = binder.bind(GATEWAY_TRUSTED_PROXIES, String.class).orElse("");
		if (customizer && !gatewayProxies.isBlank()) {
			return GATEWAY_CUSTOMIZER + " is true: Reactor Netty takes each request's remote address from the "
					+ "forwarded headers of peers matching " + GATEWAY_TRUSTED_PROXIES;
		}
		return null;
	}

	static String message(String handling, List<IpRange> trustedProxies) {
		String trusted = trustedProxies.isEmpty() ? "empty, so X-Forwarded-For is never read"
				: "now " + trustedProxies.stream().map(IpRange::toString).collect(Collectors.joining(", "));
		return handling + ". The rate limiter's clientIpKeyResolver keys clients by the TCP peer, not by that "
				+ "address, and reads X-Forwarded-For only when the peer is in window-rate-limiter.trusted-proxies ("
				+ trusted + "). Behind a load balancer or ingress controller, list its addresses there, or every "
				+ "client behind it shares the load balancer's key.";
	}

}
