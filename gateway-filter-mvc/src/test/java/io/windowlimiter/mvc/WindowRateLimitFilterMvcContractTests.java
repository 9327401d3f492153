package io.windowlimiter.mvc;

import java.util.LinkedHashMap;
import java.util.Map;

import io.windowlimiter.gateway.test.WindowRateLimitFilterContract;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** The filter contract on Server MVC (Tomcat): the test application, in this JVM. */
class WindowRateLimitFilterMvcContractTests extends WindowRateLimitFilterContract {

	private ConfigurableApplicationContext gateway;

	@Override
	protected int startGateway(Map<String, String> properties) {
		Map<String, String> all = new LinkedHashMap<>(properties);
		// the test application's Java DSL routes need a downstream; the contract does not call them
		all.put("test.downstream", "http://127.0.0.1:1");
		this.gateway = new SpringApplicationBuilder(MvcTestApplication.class)
			.run(all.entrySet().stream().map(p -> "--" + p.getKey() + "=" + p.getValue()).toArray(String[]::new));
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
		return "spring.cloud.gateway.server.webmvc.routes";
	}

	@Override
	protected String keyResolver(String bean) {
		return bean;
	}

	/**
	 * Not on Server MVC: its filter does not give a concurrency slot back when the response ends, so
	 * {@code MvcRouteCheck} refuses {@code algorithm: concurrency} at start-up (docs/server-mvc.md), and the
	 * contract's concurrency cases assert that refusal here. A finding of issue 48: the WebFlux filter holds and
	 * frees slots; giving Server MVC the same needs the release wired to the end of its response writing (as its
	 * LLM metering is), more than this change.
	 */
	@Override
	protected boolean releasesConcurrencySlots() {
		return false;
	}

}
