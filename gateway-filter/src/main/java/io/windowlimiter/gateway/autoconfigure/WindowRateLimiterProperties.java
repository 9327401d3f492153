package io.windowlimiter.gateway.autoconfigure;

import io.windowlimiter.gateway.key.HeaderKeyResolver;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Global settings of the window rate limiter. Limits themselves are per route, in the
 * {@code RequestRateLimiter} filter's {@code window-rate-limiter.*} arguments.
 */
@ConfigurationProperties(WindowRateLimiterProperties.PREFIX)
public class WindowRateLimiterProperties {

	public static final String PREFIX = "window-rate-limiter";

	/** Whether to register the window rate limiter and its key resolvers. */
	private boolean enabled = true;

	/** The header whose value the {@code headerKeyResolver} bean uses as the client key. */
	private String keyHeader = HeaderKeyResolver.DEFAULT_HEADER;

	/**
	 * How many proxies in front of the gateway append to X-Forwarded-For; the
	 * {@code clientIpKeyResolver} bean trusts only their entries. 0 uses the TCP peer's address.
	 */
	private int trustedProxyHops = 0;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyHeader() {
		return this.keyHeader;
	}

	public void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	public int getTrustedProxyHops() {
		return this.trustedProxyHops;
	}

	public void setTrustedProxyHops(int trustedProxyHops) {
		this.trustedProxyHops = trustedProxyHops;
	}

}
