package io.windowlimiter.gateway.filter;

import java.util.Map;

import io.windowlimiter.core.RateLimiterCore;
import io.windowlimiter.gateway.GatewayTestApplication;
import io.windowlimiter.gateway.test.WindowRateLimitFilterContract;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** The filter contract on WebFlux: a gateway of the library's auto-configuration, in this JVM. */
class WindowRateLimitFilterContractTests extends WindowRateLimitFilterContract {

	private ConfigurableApplicationContext gateway;

	@Override
	protected int startGateway(Map<String, String> properties) {
		this.gateway = new SpringApplicationBuilder(GatewayTestApplication.class)
			.run(properties.entrySet().stream().map(p -> "--" + p.getKey() + "=" + p.getValue()).toArray(String[]::new));
		return ((WebServerApplicationContext) this.gateway).getWebServer().getPort();
	}

	@Override
	protected void stopGateway() {
		if (this.gateway != null) {
			this.gateway.close();
		}
	}

	@Override
	protected String routesProperty() {
		return "spring.cloud.gateway.server.webflux.routes";
	}

	@Override
	protected String keyResolver(String bean) {
		return "#{@" + bean + "}";
	}

	/** This module's tests run without Micrometer's registry, so without the metrics endpoint: the bean itself. */
	@Override
	protected long bufferedBytes() {
		return this.gateway.getBean(RateLimiterCore.class).bufferedBodies().buffered();
	}

	@Override
	protected long bufferBudget() {
		return this.gateway.getBean(RateLimiterCore.class).bufferedBodies().max();
	}

}
